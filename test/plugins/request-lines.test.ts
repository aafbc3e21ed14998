/**
 * The worker's budgets of request lines (`worker/request-lines.ts`): requests sent and requests
 * refused before anything left are counted apart, and the call's note names the hosts whose sent
 * requests went unlogged.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MAX_NETWORK_LINES_PER_CALL } from '../../main/plugins/limits.js';
import { requestLine } from '../../main/plugins/network/request-log.js';
import { RequestLines } from '../../main/plugins/worker/request-lines.js';

const sent = (target: string) => ({ level: 'info' as const, line: requestLine('GET', target, { status: 200, bytes: 2 }), sent: true, target });
const refused = (target: string) => ({ level: 'warn' as const, line: requestLine('GET', target, { refused: `${target} is not on the plugin's [network] allow list` }), sent: false, target });

it('refused requests do not use up the lines of requests sent; past its budget a sent request is named in the note', () => {
  const lines = new RequestLines(64 * 1024);
  for (let i = 0; i < 2 * MAX_NETWORK_LINES_PER_CALL; i++) lines.add(refused(`elsewhere-${i}.example:443`));
  assert.equal(lines.add(sent('api.example.com:443'))?.message, 'network: GET api.example.com:443 → 200, 2 bytes');
  for (let i = 1; i < MAX_NETWORK_LINES_PER_CALL; i++) assert.ok(lines.add(sent('api.example.com:443')));
  assert.equal(lines.add(sent('other.example.com:443')), undefined, 'past the budget of sent requests');
  for (let i = 0; i < 12; i++) lines.add(sent(`h${i}.example.com:443`));
  const notes = lines.settle().map((n) => n.message);
  assert.deepEqual(notes, [
    `dropped 13 network line(s) of requests sent, over the per-call budget of request lines (1000 lines, 262144 bytes): the call made more requests than were logged, to other.example.com:443, h0.example.com:443, h1.example.com:443, h2.example.com:443, h3.example.com:443, h4.example.com:443, h5.example.com:443, h6.example.com:443, and 5 to other hosts`,
    'dropped 1000 network line(s) of requests refused, over the per-call budget of request lines (1000 lines, 262144 bytes): the call made more requests than were logged',
  ]);
  assert.deepEqual(lines.settle(), [], 'the next call starts with full budgets');
  assert.ok(lines.add(sent('api.example.com:443')));
});

it("a line names the guest's method and host clipped, and still says where the request went and how it ended", () => {
  const host = `${'a'.repeat(100_000)}.example:80`;
  const line = requestLine('X'.repeat(5000), host, { refused: `${host} is not on the plugin's [network] allow list` });
  assert.ok(line.length < 1024, `${line.length} characters`);
  assert.match(line, /^network: X{200}… \(5000 characters\) a{200}… \(100011 characters\) refused: a{400}… \(100055 characters\)$/);
  // A pair is never cut in half.
  assert.equal(requestLine('GET', `${'a'.repeat(199)}\u{1F600}`, { status: 200, bytes: 0 }), `network: GET ${'a'.repeat(199)}… (201 characters) → 200, 0 bytes`);
});

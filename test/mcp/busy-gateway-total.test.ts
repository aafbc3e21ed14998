import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SLOTS } from '../../main/plugins/worker/call-channel.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { running } from '../helpers/running-call.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';
import { STREAMABLE_HEADERS } from './helpers.js';

/**
 * The gateway's total of waiting arguments (`maxTotalWaitingArgumentBytes`, here 1 MiB) reached by
 * one module: a call to another module, which holds nothing, is answered as any busy module's
 * is, 503 with `Retry-After: 1` and -32000 naming the gateway's total.
 */
const TOTAL = 1024 * 1024;
const SIZE = 600 * 1024;
let fx: LoadedFixtures;
let gw: RunningGateway;
before(async () => {
  fx = await loadFixtures([{ name: 'crowded', kind: 'slow' }, { name: 'idle', kind: 'slow' }], { maxTotalWaitingArgumentBytes: TOTAL });
  assert.deepEqual(fx.report.failed, []);
  gw = await startGateway(fx.registry);
});
after(async () => {
  await gw.close();
  await fx.close();
});

test("a call over the gateway's total of waiting arguments: 503, Retry-After: 1, -32000 naming the total", async () => {
  const crowded = fx.registry.get('crowded')!;
  // The running call lasts until it is cancelled: the refusal is then not a race with its end.
  const stop = new AbortController();
  const slow = crowded.invokeTool({ name: 'slow', argumentsJson: '30000', callId: 'slow' }, { signal: stop.signal });
  const stopped = slow.then(() => 'answered', (err: unknown) => (err instanceof Error ? err.message : String(err)));
  await running(crowded, 'slow', slow);
  const posted = Array.from({ length: SLOTS - 1 }, (_, i) => crowded.invokeTool({ name: 'echo', argumentsJson: '"small"', callId: `posted-${i}` }));
  const waiting = crowded.invokeTool({ name: 'echo', argumentsJson: JSON.stringify('w'.repeat(SIZE)), callId: 'waiting' });

  const call = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'i'.repeat(SIZE) } } });
  const res = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/idle', headers: { ...gw.auth, ...STREAMABLE_HEADERS }, body: call(7) });
  assert.equal(res.status, 503);
  assert.equal(res.headers['retry-after'], '1');
  const body = JSON.parse(res.body) as { id: number; error: { code: number; message: string } };
  assert.equal(body.id, 7);
  assert.equal(body.error.code, -32000);
  assert.match(body.error.message, /^busy: module idle: the gateway's waiting calls hold 0\.6 MiB of arguments, its total cap 1\.0 MiB; try again later$/);

  stop.abort();
  assert.match(await stopped, /was cancelled while it ran/);
  await Promise.all([...posted, waiting]);
  const again = await unixRequest(gw.socketPath, { method: 'POST', path: '/mcp/idle', headers: { ...gw.auth, ...STREAMABLE_HEADERS }, body: call(8) });
  assert.equal(again.status, 200, 'the total is free once the crowded module\'s calls are posted');
});

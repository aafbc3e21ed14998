/**
 * Request bodies being read, all connections together. Each body is capped at 10 MiB, but a body
 * is held whole while it comes in, and a token holder picks how many connections send one: 40
 * connections that each sent 10 MiB less a byte and stalled held 400 MiB of the gateway (Electron's
 * main process) for the 60 s request timeout, 512 of them 5 GiB. Now the bodies being read share
 * one cap (`MAX_READING_BODY_BYTES`): past it the body whose client has gone longest without
 * sending is refused 503 and let go, never the one whose bytes just came.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MAX_READING_BODY_BYTES, MAX_REQUEST_BYTES } from '../../main/gateway/index.js';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { heldAfterGc } from '../fabric/held-after-gc.js';

let gw: RunningGateway;
before(async () => {
  // A million 1-byte chunks take longer than the 60 s request timeout to arrive on a loaded
  // machine (EPIPE at load 30); the timeout is not what these tests are about.
  gw = await startGateway(undefined, { connectionLimits: { requestTimeoutMs: 170_000 } });
});
after(() => gw.close());

const head = (): string =>
  `POST /mcp/nothing-here HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_REQUEST_BYTES}\r\n\r\n`;

test('bodies held while they come in are capped all together: the one stalled longest is refused 503, the one sending is read', { timeout: 180_000 }, async () => {
  // All but the last byte of a 10 MiB body, on as many connections as pass the cap together.
  const almost = Buffer.alloc(MAX_REQUEST_BYTES - 1, 0x20);
  const count = Math.floor(MAX_READING_BODY_BYTES / almost.length) + 1;
  const conns: RawConnection[] = [];
  for (let i = 0; i < count; i++) {
    const conn = await RawConnection.open(gw.socketPath);
    conns.push(conn);
    // One after the other: the first connection is the one gone longest without sending.
    await conn.write(head());
    await conn.write(almost);
  }
  const [first, ...rest] = conns as [RawConnection, ...RawConnection[]];
  const refused = await first.readResponse();
  assert.equal(refused.status, 503);
  assert.equal(refused.headers['retry-after'], '1');
  assert.equal(refused.headers['connection'], 'close');
  assert.match(JSON.parse(refused.body).error, /request bodies being sent/);
  assert.ok(gw.gateway.readingBodyBytes <= MAX_READING_BODY_BYTES, `${gw.gateway.readingBodyBytes} bytes of bodies held`);
  // Its connection closes once the refusal is sent: the rest of its body is never read.
  await new Promise<void>((resolve) => (first.isClosed ? resolve() : first.socket.once('close', () => resolve())));

  // The others are read on. The one whose last byte comes is answered as its body deserves (not
  // 503); whole, it costs more (its parsed forms, counted until answered), and room for that is
  // made by letting the stalest still-stalled bodies go (503). None is let go while it sends.
  let served = 0;
  for (const conn of rest) {
    await conn.write('\n').catch(() => {}); // a body let go has its connection closed
    const answer = await conn.readResponse();
    assert.ok(gw.gateway.readingBodyBytes <= MAX_READING_BODY_BYTES, `${gw.gateway.readingBodyBytes} bytes of bodies held`);
    if (answer.status === 503) assert.match(JSON.parse(answer.body).error, /request bodies being sent/);
    else served += 1;
    if (conn === rest[0]) assert.notEqual(answer.status, 503, answer.body);
  }
  assert.ok(served >= 1);
  while (gw.gateway.readingBodyBytes > 0) await new Promise((r) => setImmediate(r));
  for (const conn of conns) conn.close();
});

test('a body sent as 1-byte chunks is counted at what it costs the process, not at its payload', { timeout: 180_000 }, async () => {
  // `1\r\nX\r\n`: one byte of body, one 'data' chunk (one Buffer view) in Node. Held as a list of
  // chunks, 1 MiB of payload held ~190 MiB while the ledger counted 1 MiB.
  const payload = 1024 * 1024;
  const wire = Buffer.from('1\r\nX\r\n'.repeat(payload));
  const before = heldAfterGc();
  const conn = await RawConnection.open(gw.socketPath);
  await conn.write(`POST /mcp/nothing-here HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
  await conn.write(wire);
  // The write is in the socket: all but what the socket's buffer still holds has been read.
  while (gw.gateway.readingBodyBytes < payload / 2) await new Promise((r) => setImmediate(r));
  const grown = heldAfterGc() - before;
  const counted = gw.gateway.readingBodyBytes;
  conn.close();
  assert.ok(grown <= 4 * counted, `a body the ledger counts as ${counted} bytes holds ${grown} bytes (${(grown / counted).toFixed(0)}x)`);
  while (gw.gateway.readingBodyBytes > 0) await new Promise((r) => setImmediate(r));
});

/**
 * Slow and idle clients: before, Node's defaults held a connection that sent nothing (no token
 * needed) 89 s and an authorised body that stalls 329 s, and nothing capped how many connections
 * were held, so a local process could run the gateway out of file descriptors. Now headers must
 * come within `headersTimeoutMs`, the whole request within `requestTimeoutMs` (408, then closed),
 * and past `maxConnections` the oldest connection not yet authorised is closed (test/gateway/silent-flood). The limits are lowered here.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEFAULT_CONNECTION_LIMITS } from '../../main/gateway/index.js';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

let gw: RunningGateway;
before(async () => {
  gw = await startGateway(undefined, { connectionLimits: { headersTimeoutMs: 300, requestTimeoutMs: 600, maxConnections: 4 } });
});
after(() => gw.close());

const closed = async (conn: RawConnection): Promise<string> => {
  const started = performance.now();
  let text = '';
  conn.socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
  while (!conn.isClosed) await new Promise((resolve) => conn.socket.once('close', resolve));
  return `${(performance.now() - started).toFixed(0)} ms: ${text.split('\r\n')[0] ?? ''}`;
};

test('the defaults: headers within 10 s, a request within 60 s, 512 connections at once, answers taken at 64 KiB every 30 s', () => {
  assert.deepEqual(DEFAULT_CONNECTION_LIMITS, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 60_000,
    maxConnections: 512,
    answerDrainWindowMs: 30_000,
    answerDrainMinBytes: 64 * 1024,
    establishedCancelIntervalMs: 10_000,
  });
});

test('a connection that sends nothing is answered 408 and closed after the headers timeout', { timeout: 180_000 }, async () => {
  const conn = await RawConnection.open(gw.socketPath);
  const said = await closed(conn);
  assert.match(said, /HTTP\/1\.1 408/);
});

test('an authorised body that stops halfway is answered 408 and closed after the request timeout', { timeout: 180_000 }, async () => {
  const conn = await RawConnection.open(gw.socketPath);
  await conn.write(`POST /mcp/x HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`);
  const said = await closed(conn);
  assert.match(said, /HTTP\/1\.1 408/);
});

test('past maxConnections the oldest connection not yet authorised is closed, and the newcomer served', { timeout: 180_000 }, async () => {
  // Its own gateway with the default header timeout: with the 300 ms above, a loaded machine that
  // kept this process off the CPU that long had the silent ones closed 408 before the newcomer
  // came (the cap, not the timeout, is what is asked here).
  const capped = await startGateway(undefined, { connectionLimits: { maxConnections: 4 } });
  try {
    const held = await Promise.all(Array.from({ length: 4 }, () => RawConnection.open(capped.socketPath)));
    const over = await RawConnection.open(capped.socketPath);
    await over.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${capped.auth.authorization}\r\n\r\n`);
    assert.equal((await over.readResponse()).status, 200);
    assert.match(await closed(held[0]!), /^\d+ ms: $/, 'the oldest silent one is closed unanswered');
    assert.deepEqual(held.slice(1).map((conn) => conn.isClosed), [false, false, false]);
    for (const conn of [...held, over]) conn.close();
  } finally {
    await capped.close();
  }
});

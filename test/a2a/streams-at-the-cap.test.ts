/**
 * A relayed A2A stream at the connection cap: 8aef42c spared every response whose type was
 * text/event-stream from being closed for a newcomer, meaning the legacy SSE sessions (their own
 * cap of 64 and idle rule); a relayed A2A stream, a runner's long task, has neither, so a token
 * holder's streams filled every slot and the newcomers' reserve and every other client was closed
 * unanswered for as long as the runner streamed. Now only a legacy session is spared; a relay is a
 * running request like a call.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { RawConnection } from '../helpers/http.js';
import { NEWCOMER_RESERVE } from '../../main/gateway/connection-limits.js';
import { fakeUpstream, startA2aGateway, type A2aGateway } from './helpers.js';

const CAP = 4;
let gw: A2aGateway;
let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
const streams: ServerResponse[] = [];
before(async () => {
  upstream = await fakeUpstream((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
    streams.push(res); // a runner's long task: events now and then, never the end
  });
  gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url }, connectionLimits: { maxConnections: CAP } } });
});
after(async () => {
  for (const s of streams) s.destroy();
  await gw.close();
  await upstream.close();
});

const STREAM = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/stream', params: { message: { role: 'user', parts: [], messageId: 'm' } } });

test('A2A streams on every slot and in the reserve: a newcomer with the token is served, the oldest stream closed', { timeout: 180_000 }, async () => {
  const held: RawConnection[] = [];
  try {
    for (let i = 0; i < CAP + NEWCOMER_RESERVE; i++) {
      const conn = await RawConnection.open(gw.socketPath);
      held.push(conn);
      const n = streams.length;
      await conn.write(`POST /a2a/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${STREAM.length}\r\n\r\n${STREAM}`);
      while (streams.length === n) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const newcomer = await RawConnection.open(gw.socketPath);
    await newcomer.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\n\r\n`);
    assert.equal((await newcomer.readResponse()).status, 200);
    newcomer.close();
    const oldest = held[0]!;
    await new Promise<void>((resolve) => (oldest.isClosed ? resolve() : oldest.socket.once('close', () => resolve())));
  } finally {
    for (const c of held) c.close();
  }
});

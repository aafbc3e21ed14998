/**
 * The connection cap against a process without the token: it held every slot with connections
 * that send nothing and reopened each one the gateway closed, so honest clients were closed at once,
 * unanswered, for as long as it ran. Now, at the cap, the gateway closes the oldest connection that
 * has not yet sent an authorised request and serves the newcomer.
 *
 * And against a token holder: a connection that had sent the token was never closed, so a token
 * holder held every slot with slow bodies (renewed at each request timeout) or idle keep-alive
 * connections (pinged every few seconds), and every other client was closed unanswered. Now, when
 * every other connection is authorised, the oldest one that runs no request (idle, or its body not
 * yet whole) is closed; one running a request never is, and then the newcomer goes.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import type { CallableModule, ModuleToolOutcome } from '../../main/gateway/index.js';

const CAP = 8;
/** Calls to `held.wait` running now, each answered when released. */
const waiting: ((outcome: ModuleToolOutcome) => void)[] = [];
/** A plain JS module whose one tool answers only when the test releases it: a request that runs. */
const held: CallableModule = {
  name: 'held', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false },
  listTools: async () => [],
  invokeTool: () => new Promise((resolve) => waiting.push(resolve)),
};
let gw: RunningGateway;
before(async () => {
  gw = await startGateway({ list: () => [held], get: (name) => (name === 'held' ? held : undefined) }, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP } });
});
after(() => gw.close());

/** Holds `count` connections that send nothing, each reopened as soon as the gateway closes it. */
function silentFlood(socketPath: string, count: number): { reopened: () => number; stop: () => void } {
  let stopped = false;
  let reopened = 0;
  const open = new Set<Socket>();
  const one = (): void => {
    if (stopped) return;
    const socket = createConnection({ path: socketPath });
    open.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      open.delete(socket);
      reopened++;
      setImmediate(one);
    });
  };
  for (let i = 0; i < count; i++) one();
  return {
    reopened: () => reopened,
    stop: () => {
      stopped = true;
      for (const socket of open) socket.destroy();
    },
  };
}

const ping = (conn: RawConnection): Promise<void> =>
  conn.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\n\r\n`);

test('honest requests keep being answered while a flood of silent connections holds the cap', { timeout: 180_000 }, async () => {
  const flood = silentFlood(gw.socketPath, CAP * 2);
  try {
    // Let the flood fill the cap first.
    while (flood.reopened() < CAP) await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < 20; i++) {
      const conn = await RawConnection.open(gw.socketPath);
      await ping(conn);
      const res = await conn.readResponse();
      assert.equal(res.status, 200, `ping ${i}`);
      conn.close();
    }
  } finally {
    flood.stop();
  }
});

test('a connection running an authorised request is kept at the cap; the newcomer goes when every other runs one', { timeout: 180_000 }, async () => {
  const running = await Promise.all(Array.from({ length: CAP }, () => RawConnection.open(gw.socketPath)));
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {} } });
  for (const conn of running) {
    await conn.write(`POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`);
  }
  while (waiting.length < CAP) await new Promise((resolve) => setTimeout(resolve, 5));
  const over = await RawConnection.open(gw.socketPath);
  // Closed at once: the write may already meet the closed socket.
  await ping(over).catch(() => {});
  await assert.rejects(over.readResponse(), /connection closed/);
  // The calls run on and are answered on their connections.
  for (const answer of waiting.splice(0)) answer({ ok: true, value: { content: 'done' } });
  for (const conn of running) {
    assert.equal((await conn.readResponse()).status, 200);
    conn.close();
  }
});

test("a token holder's idle keep-alive connections on every slot: the oldest is closed and the newcomer served", { timeout: 180_000 }, async () => {
  const idle: RawConnection[] = [];
  for (let i = 0; i < CAP; i++) {
    // One after the other: the first is the oldest.
    const conn = await RawConnection.open(gw.socketPath);
    idle.push(conn);
    await ping(conn);
    assert.equal((await conn.readResponse()).status, 200);
  }
  const newcomer = await RawConnection.open(gw.socketPath);
  await ping(newcomer);
  assert.equal((await newcomer.readResponse()).status, 200);
  const [oldest, ...rest] = idle as [RawConnection, ...RawConnection[]];
  await new Promise<void>((resolve) => (oldest.isClosed ? resolve() : oldest.socket.once('close', () => resolve())));
  // The others are still served on their kept-alive connections.
  for (const conn of rest) {
    await ping(conn);
    assert.equal((await conn.readResponse()).status, 200);
  }
  for (const conn of [...rest, newcomer]) conn.close();
});

test("a token holder's slow bodies on every slot: the oldest is closed and the newcomer served", { timeout: 180_000 }, async () => {
  const slow: RawConnection[] = [];
  for (let i = 0; i < CAP; i++) {
    // One after the other: the first is the oldest.
    const conn = await RawConnection.open(gw.socketPath);
    slow.push(conn);
    const before = gw.gateway.readingBodyBytes;
    await conn.write(`POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    // Authorised (its head read) and its first byte counted before the next one comes.
    while (gw.gateway.readingBodyBytes === before) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const newcomer = await RawConnection.open(gw.socketPath);
  await ping(newcomer);
  assert.equal((await newcomer.readResponse()).status, 200);
  const [oldest, ...rest] = slow as [RawConnection, ...RawConnection[]];
  await new Promise<void>((resolve) => (oldest.isClosed ? resolve() : oldest.socket.once('close', () => resolve())));
  for (const conn of rest) assert.equal(conn.isClosed, false);
  for (const conn of [...rest, newcomer]) conn.close();
});

/**
 * The connection cap against a process without the token: it held every slot with connections
 * that send nothing and reopened each one the gateway closed, so honest clients were closed at once,
 * unanswered, for as long as it ran. Now, at the cap, the gateway closes the oldest connection that
 * has not yet sent an authorised request, never one that has, and serves the newcomer.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

const CAP = 8;
let gw: RunningGateway;
before(async () => {
  gw = await startGateway(undefined, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP } });
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

test('a connection that has sent an authorised request is kept at the cap; the newcomer goes when nothing else may', { timeout: 180_000 }, async () => {
  const held = await Promise.all(Array.from({ length: CAP }, () => RawConnection.open(gw.socketPath)));
  for (const conn of held) {
    await ping(conn);
    assert.equal((await conn.readResponse()).status, 200);
  }
  const over = await RawConnection.open(gw.socketPath);
  // Closed at once: the write may already meet the closed socket.
  await ping(over).catch(() => {});
  await assert.rejects(over.readResponse(), /connection closed/);
  // The authorised ones are still served on their kept-alive connections.
  for (const conn of held) {
    await ping(conn);
    assert.equal((await conn.readResponse()).status, 200);
    conn.close();
  }
});

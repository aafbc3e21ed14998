/**
 * The shared participant socket admits no one, and any local process running as the user (a
 * worker) can connect to it: what it costs the gateway must stay bounded. Real Unix sockets.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { MAX_SHARED_SOCKET_CONNECTIONS, SHARED_SOCKET_REFUSAL, withParticipantSocket } from '../../main/fabric/index.js';
import { until, within } from '../broker/helpers.js';

const base = mkdtempSync(join(tmpdir(), 'fabric-shared-'));
after(() => rmSync(base, { recursive: true, force: true }));

async function connect(path: string): Promise<Socket> {
  const socket = createConnection({ path });
  socket.on('error', () => {}); // a write after the gateway closed it: EPIPE
  await once(socket, 'connect');
  return socket;
}

test('a first line that never ends (4 MiB each, 8 connections) is cut off at the refusal line cap, not held until the hello timeout', async () => {
  const shared = await withParticipantSocket(join(base, 'long'), { helloTimeoutMs: 60_000 });
  try {
    const sockets = await Promise.all(Array.from({ length: 8 }, () => connect(shared.path)));
    // Not events.once: it rejects on the 'error' (ECONNRESET, EPIPE) that a reset brings first.
    const closed = Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve))));
    for (const socket of sockets) socket.write('{"v":3,"id":1,"method":"session.hello","params":{"card":{"name":"' + 'x'.repeat(4 * 1024 * 1024));
    // Before: each line was read up to the frame cap (33 MiB) and held for the 60 s hello timeout.
    await within(closed, 15_000, 'the gateway closing every connection with an endless first line');
  } finally {
    await shared.close();
  }
});

test(`connections past ${MAX_SHARED_SOCKET_CONNECTIONS} at once are closed at once (the oldest silent ones): a worker cannot hold the gateway's descriptors`, async () => {
  const shared = await withParticipantSocket(join(base, 'many'), { helloTimeoutMs: 60_000 });
  const extra = 24;
  const sockets: Socket[] = [];
  try {
    let closes = 0;
    for (let i = 0; i < MAX_SHARED_SOCKET_CONNECTIONS + extra; i++) {
      const socket = await connect(shared.path);
      socket.once('close', () => closes++);
      sockets.push(socket);
    }
    // Before: every one stayed open for the 60 s hello timeout, each holding a descriptor of the gateway's.
    await until(() => closes >= extra, `${extra} connections closed`);
    assert.equal(sockets.filter((socket) => !socket.destroyed && socket.readyState === 'open').length, MAX_SHARED_SOCKET_CONNECTIONS);
  } finally {
    for (const socket of sockets) socket.destroy();
    await shared.close();
  }
});

test(`a hello is told why it is refused even while ${MAX_SHARED_SOCKET_CONNECTIONS} silent connections are held: the oldest silent one makes room`, async () => {
  const shared = await withParticipantSocket(join(base, 'squat'), { helloTimeoutMs: 60_000 });
  const squatters: Socket[] = [];
  try {
    for (let i = 0; i < MAX_SHARED_SOCKET_CONNECTIONS; i++) squatters.push(await connect(shared.path));
    const firstSquatterClosed = new Promise((resolve) => squatters[0]!.once('close', resolve));
    const worker = await connect(shared.path);
    let heard = '';
    worker.on('data', (chunk: Buffer) => (heard += chunk.toString()));
    worker.write(JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'w', description: 'd', version: '1.0.0', skills: [] } } }) + '\n');
    await new Promise((resolve) => worker.once('close', resolve));
    // Before (net.Server.maxConnections): the newcomer was closed unread, a bare close or ECONNRESET.
    assert.ok(heard.includes(SHARED_SOCKET_REFUSAL), `the hello got ${JSON.stringify(heard)} before the close`);
    // Not made room for, it is closed only by its 60 s hello timeout: 30 s tells the two apart, and leaves a loaded machine time.
    await within(firstSquatterClosed, 30_000, 'the oldest silent connection closed to make room');
    assert.equal(squatters.filter((socket) => !socket.destroyed && socket.readyState === 'open').length, MAX_SHARED_SOCKET_CONNECTIONS - 1);
  } finally {
    for (const socket of squatters) socket.destroy();
    await shared.close();
  }
});

test(`a hello is told why it is refused even while ${MAX_SHARED_SOCKET_CONNECTIONS} refused hellos are held open by peers that never close: a flushed refusal makes room`, async () => {
  const shared = await withParticipantSocket(join(base, 'refused-squat'), { helloTimeoutMs: 60_000, closeGraceMs: 60_000 });
  const squatters: Socket[] = [];
  const hello = JSON.stringify({ v: 3, id: 1, method: 'session.hello', params: { card: { name: 'w', description: 'd', version: '1.0.0', skills: [] } } }) + '\n';
  try {
    const heardBySquatters: string[] = [];
    for (let i = 0; i < MAX_SHARED_SOCKET_CONNECTIONS; i++) {
      // Half-open allowed: it takes the refusal and the gateway's end, and never closes its own.
      const socket = createConnection({ path: shared.path, allowHalfOpen: true });
      socket.on('error', () => {});
      await once(socket, 'connect');
      heardBySquatters.push('');
      socket.on('data', (chunk: Buffer) => (heardBySquatters[i] += chunk.toString()));
      socket.write(hello);
      squatters.push(socket);
    }
    await until(() => heardBySquatters.every((heard) => heard.includes(SHARED_SOCKET_REFUSAL)), 'every squatter refused');
    const worker = await connect(shared.path);
    let heard = '';
    worker.on('data', (chunk: Buffer) => (heard += chunk.toString()));
    worker.write(hello);
    await new Promise((resolve) => worker.once('close', resolve));
    // Before: each refused hello was held for its close grace, so the newcomer was closed unread.
    assert.ok(heard.includes(SHARED_SOCKET_REFUSAL), `the hello got ${JSON.stringify(heard)} before the close`);
  } finally {
    for (const socket of squatters) socket.destroy();
    await shared.close();
  }
});

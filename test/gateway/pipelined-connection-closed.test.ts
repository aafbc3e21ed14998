/**
 * Calls pipelined on one connection whose client closes it (or whose connection is closed for a
 * newcomer at the cap): Node tells only the response on the socket that its connection closed
 * (its 'close'); the responses queued behind it never learn. Before, their calls ran on (a slow
 * tool's for as long as it liked, outside any connection slot), their bodies stayed held among
 * the 64 MiB of bodies, and an answer written after the close was followed by the unsent-bytes
 * ledger under a socket whose 'close' had passed: held for good (2 MiB here, after every
 * connection was gone). Now every request queued behind another is told its connection closed,
 * as the one on the socket is: its call is cancelled, its body let go, its answer never held.
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import type { CallableModule, ModuleToolOutcome } from '../../main/gateway/index.js';
import type { EdgeRow } from '../../main/gateway/edge/edge-log.js';
import { MAX_REQUESTS_ON_A_CONNECTION } from '../../main/gateway/queued-responses.js';

/** Calls to `held.wait` running now, each answered when the test says. */
const waiting: ((outcome: ModuleToolOutcome) => void)[] = [];
let cancelled = 0;
const held: CallableModule = {
  name: 'held', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false },
  listTools: async () => [],
  invokeTool: (_request, options) =>
    new Promise((resolve, reject) => {
      waiting.push(resolve);
      options?.signal?.addEventListener('abort', () => {
        cancelled++;
        reject(Object.assign(new Error('cancelled'), { kind: 'cancelled' }));
      });
    }),
};
let gw: RunningGateway;
before(async () => {
  gw = await startGateway({ list: () => [held], get: (name) => (name === 'held' ? held : undefined) }, { connectionLimits: { maxConnections: 2, establishedCancelIntervalMs: 0 } });
});
after(() => gw.close());

const PAD = 'x'.repeat(1024 * 1024);
function post(id: number): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: { pad: PAD } } });
  return `POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
}
const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
};
/** Answers every call still running with 1 MiB, as a module that never heard of a cancel would. */
function answerAll(): void {
  for (const answer of waiting.splice(0)) answer({ ok: true, value: { content: 'y'.repeat(1024 * 1024) } });
}

/** Three 1 MiB calls pipelined on one connection, all running. */
async function threePipelined(): Promise<RawConnection> {
  const conn = await RawConnection.open(gw.socketPath);
  conn.socket.on('error', () => {});
  const running = waiting.length;
  await conn.write(post(1) + post(2) + post(3));
  await until(() => waiting.length === running + 3);
  return conn;
}

/** Once the connection is gone: every call was cancelled, and nothing of them is held, even after a module answers. */
async function nothingLeftOf(conn: RawConnection, before: number, other?: RawConnection): Promise<void> {
  await until(() => conn.isClosed && cancelled > before);
  // Every response on the connection is told in the same turn as the one on the socket.
  await new Promise((resolve) => setImmediate(resolve));
  // Before: 1 of 3 cancelled (the one on the socket).
  assert.equal(cancelled - before, 3, 'calls queued behind the first ran on after their connection closed');
  if (other) {
    // Its call goes with it (Node tells the response on the socket): only the queued ones' answers are written below.
    other.close();
    await until(() => cancelled - before === 4);
  }
  answerAll();
  await until(() => gw.gateway.readingBodyBytes === 0);
  await new Promise((resolve) => setImmediate(resolve));
  // Before: 2 MiB held for good.
  assert.equal(gw.gateway.unsentBytes, 0);
}

test('calls pipelined behind the first on a connection its client closes are cancelled, and nothing of them is held', { timeout: 180_000 }, async () => {
  const conn = await threePipelined();
  try {
    const before = cancelled;
    conn.close();
    await nothingLeftOf(conn, before);
  } finally {
    answerAll();
  }
});

test('calls pipelined behind the first on a connection closed for a newcomer at the cap are cancelled too', { timeout: 180_000 }, async () => {
  const conn = await threePipelined();
  const other = await RawConnection.open(gw.socketPath);
  try {
    // The second slot runs a call too: the newcomer's token makes room by closing the oldest call's connection.
    const running = waiting.length;
    await other.write(post(9));
    await until(() => waiting.length === running + 1);
    const before = cancelled;
    const newcomer = await RawConnection.open(gw.socketPath);
    await newcomer.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\n\r\n`);
    assert.equal((await newcomer.readResponse()).status, 200);
    newcomer.close();
    const [first] = [(await conn.readResponse().catch(() => undefined))?.body];
    assert.match(first ?? '', /-32800/);
    await nothingLeftOf(conn, before, other);
  } finally {
    other.close();
    answerAll();
  }
});

test('a connection that pipelines more requests than it may have unanswered is closed: its calls are bounded, and cancelled', { timeout: 180_000 }, async () => {
  const conn = await RawConnection.open(gw.socketPath);
  conn.socket.on('error', () => {});
  const running = waiting.length;
  const before = cancelled;
  const sent = 200;
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {} } });
  const one = `POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`;
  try {
    await conn.write(one.repeat(sent));
    await until(() => conn.isClosed || waiting.length - running === sent);
    // Before: every one of them running on one connection, the connection open (20,000 took 326 MB).
    assert.ok(conn.isClosed, `${waiting.length - running} calls running on one connection`);
    const ran = waiting.length - running;
    assert.ok(ran <= MAX_REQUESTS_ON_A_CONNECTION, `${ran} calls ran`);
    await until(() => cancelled - before === ran);
  } finally {
    conn.close();
    answerAll();
  }
});

test('a client without the token that pipelines thousands of tiny requests and reads nothing is closed, and nothing of them is held', { timeout: 180_000 }, async () => {
  // A write deadline far away: only the bound on a connection's requests can close it here.
  const own = await startGateway({ list: () => [] }, { connectionLimits: { answerDrainWindowMs: 600_000 } });
  const rows: EdgeRow[] = [];
  const off = own.gateway.onEdge((row) => rows.push(row));
  const conn = await RawConnection.open(own.socketPath);
  conn.socket.on('error', () => {});
  conn.socket.pause(); // reads nothing
  try {
    const sent = 3_000;
    await conn.write('GET / HTTP/1.1\r\n\r\n'.repeat(sent));
    const refused = (): number => rows.filter((row) => row.status === 401).length;
    await until(() => conn.isClosed || refused() === sent);
    // Before: 3,000 requests, answers and Koa contexts held queued behind the first (~18 MB; the
    // ledger counting ~0.9 MB of answers) until the write deadline.
    assert.ok(conn.isClosed, `${refused()} requests refused and queued on one connection, still open`);
    assert.ok(refused() <= MAX_REQUESTS_ON_A_CONNECTION, `${refused()} requests run`);
    await until(() => own.gateway.unsentBytes === 0);
  } finally {
    off();
    conn.close();
    await own.close();
  }
});

/** A small call to `held.wait` (its body ~90 bytes). */
function small(id: number): string {
  const call = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait', arguments: {} } });
  return `POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`;
}

/** The server's side of each connection a request comes in on, while subscribed (Node's `http.server.request.start`). */
function serverSockets(): { sockets: Socket[]; requests: () => number; stop: () => void } {
  const sockets: Socket[] = [];
  let requests = 0;
  const seen = (message: unknown): void => {
    const { socket } = message as { socket: Socket };
    if (!sockets.includes(socket)) sockets.push(socket);
    requests++;
  };
  subscribe('http.server.request.start', seen);
  return { sockets, requests: () => requests, stop: () => unsubscribe('http.server.request.start', seen) };
}

test('requests Node answers itself (an Expect it does not know: 417) count among a connection\'s unanswered too', { timeout: 180_000 }, async () => {
  // A write deadline far away: only the bound on a connection's requests can close it here.
  const own = await startGateway({ list: () => [] }, { connectionLimits: { answerDrainWindowMs: 600_000 } });
  const served = serverSockets();
  const conn = await RawConnection.open(own.socketPath);
  conn.socket.on('error', () => {});
  conn.socket.pause(); // reads nothing
  try {
    // Not awaited: a paused gateway never takes it all.
    conn.socket.write('GET / HTTP/1.1\r\nExpect: x\r\n\r\n'.repeat(10_000));
    // Node stops reading a connection once its queued answers pass 16 KiB; the bound closes it before.
    await until(() => served.sockets[0] !== undefined && (served.sockets[0].destroyed || served.sockets[0].isPaused()));
    // Before: Node answered each 417 itself, never through the guards, so nothing counted them: the
    // connection was held open, paused, with ~2,000 requests and answers queued (4.4 MB of heap a
    // connection) until the write deadline.
    assert.ok(served.sockets[0]!.destroyed, `a client without the token holds ${served.requests()} requests on one connection, still open`);
  } finally {
    served.stop();
    conn.close();
    await own.close();
  }
});

test('once a connection is closed for its pipelined requests, the requests already read behind them are not run', { timeout: 180_000 }, async () => {
  const own = await startGateway({ list: () => [] }, { connectionLimits: { answerDrainWindowMs: 600_000 } });
  const rows: EdgeRow[] = [];
  const off = own.gateway.onEdge((row) => rows.push(row));
  const served = serverSockets();
  const conn = await RawConnection.open(own.socketPath);
  conn.socket.on('error', () => {});
  conn.socket.pause(); // reads nothing
  try {
    const sent = 3_000; // 54 KB: one read
    await conn.write('GET / HTTP/1.1\r\n\r\n'.repeat(sent));
    const server = served.sockets[0] ?? (await until(() => served.sockets.length > 0), served.sockets[0]!);
    await new Promise((resolve) => (server.closed ? resolve(undefined) : server.once('close', resolve)));
    // Every request Node read before the close has been through the app by the socket's 'close'.
    const refused = rows.filter((row) => row.status === 429).length;
    // Before: the rest of the read went through Koa after the close, each refused 429 again with
    // its own row (2,984 rows here; ~0.6 s of the main thread a 64 KiB read).
    assert.equal(refused, 1, `${refused} requests refused 429 on one connection`);
    assert.ok(rows.length <= MAX_REQUESTS_ON_A_CONNECTION + 1, `${rows.length} rows`);
  } finally {
    off();
    served.stop();
    conn.close();
    await own.close();
  }
});

test('a client that keeps 16 requests unanswered on its connection is served: once one is answered, one more may follow', { timeout: 180_000 }, async () => {
  const conn = await RawConnection.open(gw.socketPath);
  conn.socket.on('error', () => {});
  const running = waiting.length;
  try {
    await conn.write(Array.from({ length: MAX_REQUESTS_ON_A_CONNECTION }, (_, i) => small(i + 1)).join(''));
    await until(() => waiting.length === running + MAX_REQUESTS_ON_A_CONNECTION);
    waiting[running]!({ ok: true, value: { content: 'first' } });
    assert.equal((await conn.readResponse()).status, 200);
    // 15 unanswered: one more makes 16, which a connection may have.
    await conn.write(small(MAX_REQUESTS_ON_A_CONNECTION + 1));
    await until(() => conn.isClosed || waiting.length === running + MAX_REQUESTS_ON_A_CONNECTION + 1);
    // Before: the request that had reached the socket still counted as queued behind it, so 16 closed it.
    assert.ok(!conn.isClosed, `closed with ${MAX_REQUESTS_ON_A_CONNECTION} requests unanswered`);
  } finally {
    conn.close();
    answerAll();
  }
});

test('requests answered on a connection that stays open are not held by the count of its pipelined ones', { timeout: 180_000 }, async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const own = await startGateway({ list: () => [] });
  const responses: WeakRef<ServerResponse>[] = [];
  const seen = (message: unknown): void => {
    responses.push(new WeakRef((message as { response: ServerResponse }).response));
  };
  subscribe('http.server.request.start', seen);
  const conn = await RawConnection.open(own.socketPath);
  try {
    const sent = MAX_REQUESTS_ON_A_CONNECTION - 1;
    await conn.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(sent));
    for (let i = 0; i < sent; i++) assert.equal((await conn.readResponse()).status, 401);
    // Every answer read (each response's 'close' comes a tick after it is sent), the connection
    // open and quiet; summing the unsent-bytes ledger lets go of the responses it saw finish.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(own.gateway.unsentBytes, 0);
    gc();
    const held = responses.filter((ref) => ref.deref() !== undefined).length;
    // Before: those pipelined behind the first stayed in the connection's set of queued responses
    // (with their requests and Koa contexts) until its next pipelined request or its close.
    assert.equal(held, 0, `${held} of ${sent} answered requests still held by their open connection`);
  } finally {
    unsubscribe('http.server.request.start', seen);
    conn.close();
    await own.close();
  }
});

for (const [shape, pad, count] of [
  ['one header of 16 KB', `X-Pad: ${'a'.repeat(15_800)}\r\n`, 3],
  ['1,500 small headers', Array.from({ length: 1_500 }, (_, i) => `x${i}:a\r\n`).join(''), 1],
] as const) {
  test(`a connection whose requests queued unanswered pass 32 KiB of heads is closed (${shape})`, { timeout: 180_000 }, async () => {
    const served = serverSockets();
    const conn = await RawConnection.open(gw.socketPath);
    conn.socket.on('error', () => {});
    const running = waiting.length;
    const before = cancelled;
    // Answered at once (the index) but queued behind the call, each holding its head until then.
    const fat = `GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\n${pad}\r\n`;
    try {
      await conn.write(small(1) + fat.repeat(count));
      await until(() => waiting.length === running + 1 && served.requests() === 1 + count);
      // The guards see each request as Node reads it: a refusal is made by now.
      await new Promise((resolve) => setImmediate(resolve));
      // Before: 15 such requests queued behind a call held ~240 KB a connection with one big
      // header each, ~1.4 MB with ~2,000 small ones (~740 MB at the connection cap).
      assert.ok(served.sockets[0]!.destroyed, `${count} request(s) of ${fat.length} bytes of head queued behind a call: the connection is still open`);
      await until(() => cancelled - before === 1);
    } finally {
      served.stop();
      conn.close();
      answerAll();
    }
  });
}

test('the trailers of chunked bodies count with the heads of the requests queued unanswered: past 32 KiB the connection is closed', { timeout: 180_000 }, async () => {
  const served = serverSockets();
  const conn = await RawConnection.open(gw.socketPath);
  conn.socket.on('error', () => {});
  const running = waiting.length;
  const before = cancelled;
  // A small head and a one-byte chunked body, then 1,800 trailer fields (Node keeps up to 2,000,
  // within 16 KiB of their own), held with the request as its head is.
  const trailers = Array.from({ length: 1_800 }, (_, i) => `x${i}:a\r\n`).join('');
  const fat = `POST / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n${trailers}\r\n`;
  try {
    await conn.write(small(1) + fat.repeat(2));
    await until(() => waiting.length === running + 1 && served.requests() === 3);
    await new Promise((resolve) => setImmediate(resolve));
    // Before: only heads were counted, and 14 such requests queued behind a call held ~760 KiB a
    // connection (~390 MB at the connection cap) where heads alone are held to ~100 KiB.
    assert.ok(served.sockets[0]!.destroyed, 'two requests with 1,800 trailer fields each queued behind a call: the connection is still open');
    await until(() => cancelled - before === 1);
  } finally {
    served.stop();
    conn.close();
    answerAll();
  }
});

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
 * yet whole) is closed.
 *
 * And when every slot runs a request (calls to a slow tool, answers not yet sent whole): the
 * newcomer was closed unanswered, so a token holder kept the desktop's own client and the
 * Inspector out for as long as it liked. Now the newcomer is kept past the cap (16 at most) until
 * it sends the token, and then the request that has run longest is cancelled, its connection
 * closed; a newcomer without the token cancels nothing, and a stream is never the one closed.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { RawConnection } from '../helpers/http.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import type { CallableModule, ModuleToolOutcome } from '../../main/gateway/index.js';
import { NEWCOMER_RESERVE } from '../../main/gateway/connection-limits.js';
import { connectClient } from '../mcp/helpers.js';
import { SseStream } from '../mcp/sse-reader.js';

const CAP = 8;
/** Calls to `held.wait` running now, each answered when released. */
const waiting: ((outcome: ModuleToolOutcome) => void)[] = [];
/** How many calls to `held.wait` were cancelled (their client gone). */
let cancelled = 0;
/**
 * A plain JS module whose tool `wait` answers only when the test releases it (a request that
 * runs), and `quick` at once.
 */
const held: CallableModule = {
  name: 'held', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false },
  listTools: async () => [],
  invokeTool: (request, options) => {
    if (request.name === 'quick') return Promise.resolve({ ok: true, value: { content: 'quick' } });
    return new Promise((resolve, reject) => {
      waiting.push(resolve);
      options?.signal?.addEventListener('abort', () => {
        cancelled++;
        // As a plugin's call does (PluginCallError): the gateway answers -32800 with the signal's reason.
        reject(Object.assign(new Error('cancelled'), { kind: 'cancelled' }));
      });
    });
  },
};
const heldModules = { list: () => [held], get: (name: string) => (name === 'held' ? held : undefined) };
let gw: RunningGateway;
before(async () => {
  // Every newcomer may cancel an established call here (the tests of who goes, one at a time); the
  // burst test below has its own gateway with the default interval.
  gw = await startGateway(heldModules, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP, establishedCancelIntervalMs: 0 } });
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
  // More than the cap and the newcomers kept past it (which wait for the token): some are closed.
  const flood = silentFlood(gw.socketPath, CAP * 2 + NEWCOMER_RESERVE);
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

/** A raw connection running `call` (to `held.wait`) on `on`, once the module has it. */
async function runningCall(on: RunningGateway): Promise<RawConnection> {
  const call = WAIT_CALL;
  const conn = await RawConnection.open(on.socketPath);
  const before = waiting.length;
  await conn.write(`POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${on.auth.authorization}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`);
  while (waiting.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
  return conn;
}

/** `CAP` raw connections, one after the other (the first is the oldest), each running a call to `held.wait`. */
const WAIT_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {} } });

async function fillWithRunningCalls(on: RunningGateway = gw): Promise<RawConnection[]> {
  const running: RawConnection[] = [];
  for (let i = 0; i < CAP; i++) running.push(await runningCall(on));
  return running;
}

/** Answers every call still waiting, reads each open connection's answer and closes them all. */
async function releaseAll(conns: readonly RawConnection[]): Promise<void> {
  for (const answer of waiting.splice(0)) answer({ ok: true, value: { content: 'done' } });
  for (const conn of conns) {
    if (!conn.isClosed) assert.equal((await conn.readResponse()).status, 200);
    conn.close();
  }
}

const closedNow = (conn: RawConnection): Promise<void> =>
  new Promise<void>((resolve) => (conn.isClosed ? resolve() : conn.socket.once('close', () => resolve())));

test('every slot running a call: a newcomer with the token is served, the call that has run longest is cancelled', { timeout: 180_000 }, async () => {
  const running = await fillWithRunningCalls();
  try {
    const before = cancelled;
    // The official SDK client: initialize, then a call, each on a connection of its pool.
    const { client, close } = await connectClient(gw, 'held', 'streamable');
    try {
      const result = await client.callTool({ name: 'quick', arguments: {} });
      assert.deepEqual(result.content, [{ type: 'text', text: 'quick' }]);
    } finally {
      await close();
    }
    const [oldest, ...rest] = running as [RawConnection, ...RawConnection[]];
    await closedNow(oldest);
    assert.ok(cancelled > before, 'the oldest call was not cancelled');
    // Only as many as the client needed slots: the youngest calls run on.
    assert.equal(rest.at(-1)?.isClosed, false);
  } finally {
    await releaseAll(running);
  }
});

test('every slot running a call: the official SDK client whose call is closed for a newcomer reads why, not a dropped connection', { timeout: 180_000 }, async () => {
  const { client, close } = await connectClient(gw, 'held', 'streamable');
  const others: RawConnection[] = [];
  try {
    const before = waiting.length;
    const call = client.callTool({ name: 'wait', arguments: {} }).then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    while (waiting.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
    // Its call is the oldest; every other slot runs a younger one.
    for (let i = 0; i < CAP - 1; i++) {
      const conn = await RawConnection.open(gw.socketPath);
      others.push(conn);
      const n = waiting.length;
      await conn.write(`POST /mcp/held HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${WAIT_CALL.length}\r\n\r\n${WAIT_CALL}`);
      while (waiting.length === n) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const newcomer = await RawConnection.open(gw.socketPath);
    await ping(newcomer);
    assert.equal((await newcomer.readResponse()).status, 200);
    newcomer.close();
    // Before: 'fetch failed' (its socket destroyed, the answer written to nobody).
    assert.match(await call, /^MCP error -32800: Request cancelled: the gateway closed this connection for another client: all 8 of its connections were running requests; call again$/);
  } finally {
    await close();
    await releaseAll(others);
  }
});

test('every slot running a call: newcomers without the token cancel nothing and are closed', { timeout: 180_000 }, async () => {
  const running = await fillWithRunningCalls();
  try {
    const before = cancelled;
    // More newcomers than the reserve: each one past it, and each older one it finds still unproven, goes.
    const silent: RawConnection[] = [];
    for (let i = 0; i < NEWCOMER_RESERVE + 8; i++) silent.push(await RawConnection.open(gw.socketPath));
    // Seen by the gateway: a newcomer with a wrong token is refused 401 (and proves nothing).
    const wrong = await RawConnection.open(gw.socketPath);
    await wrong.write('GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer nope\r\n\r\n');
    assert.equal((await wrong.readResponse()).status, 401);
    for (const conn of silent.slice(0, 8)) await closedNow(conn);
    assert.equal(cancelled, before, 'a newcomer without the token cancelled a call');
    for (const conn of running) assert.equal(conn.isClosed, false);
    for (const conn of [...silent, wrong]) conn.close();
  } finally {
    await releaseAll(running);
  }
});

test('every slot running a call: a tokenless flood reopening its connections cannot keep the official SDK client out', { timeout: 180_000 }, async () => {
  const running = await fillWithRunningCalls();
  // 64 connections that send nothing, each reopened at once: before, every arrival closed the
  // newcomer before it (the reserve held one unproven connection, not 16), the SDK's among them.
  const flood = silentFlood(gw.socketPath, 64);
  try {
    while (flood.reopened() < 64) await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < 3; i++) {
      const { client, close } = await connectClient(gw, 'held', 'streamable');
      try {
        assert.deepEqual((await client.callTool({ name: 'quick', arguments: {} })).content, [{ type: 'text', text: 'quick' }]);
      } finally {
        await close();
      }
    }
  } finally {
    flood.stop();
    await releaseAll(running.filter((conn) => !conn.isClosed));
  }
});

test('a stream is never the one closed: with every other slot a stream, the newcomer with the token stays past the cap within the reserve', { timeout: 180_000 }, async () => {
  const streams = await Promise.all(Array.from({ length: CAP }, () => SseStream.open(gw.socketPath, '/mcp/held/sse', gw.auth)));
  try {
    for (const stream of streams) await stream.next(); // its endpoint event: open and counted
    const newcomer = await RawConnection.open(gw.socketPath);
    await ping(newcomer);
    assert.equal((await newcomer.readResponse()).status, 200);
    newcomer.close();
    for (const stream of streams) assert.equal(stream.response.destroyed, false);
  } finally {
    for (const stream of streams) stream.disconnect();
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

test('a burst of newcomers with the token cancels at most one established call: past it, the burst\'s own calls go', { timeout: 180_000 }, async () => {
  // The default interval (10 s): this test runs well within one.
  const burstGw = await startGateway(heldModules, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP } });
  const established = await fillWithRunningCalls(burstGw);
  const burst: RawConnection[] = [];
  try {
    // Each newcomer runs a long call too, as an orchestrator opening more connections than the cap does.
    for (let i = 0; i < 5; i++) burst.push(await runningCall(burstGw));
    // Which running calls went to make room?
    const all = [...established, ...burst];
    while (all.filter((conn) => conn.isClosed).length < burst.length - 1) await new Promise((resolve) => setTimeout(resolve, 5));
    // The first newcomer cancelled the oldest established call and took its place within the cap;
    // the second found the interval spent and stayed past the cap, cancelling nothing; each later
    // one cancelled the call of the one before it, still past the cap.
    // Before: every newcomer cancelled an established call (5 of 8 closed).
    assert.deepEqual(established.map((conn) => conn.isClosed), [true, false, false, false, false, false, false, false]);
    assert.deepEqual(burst.map((conn) => conn.isClosed), [false, true, true, true, false]);
  } finally {
    await releaseAll([...established, ...burst].filter((conn) => !conn.isClosed));
    await burstGw.close();
  }
});

test('a newcomer that made room by cancelling an established call holds a slot within the cap: the next newcomer does not cancel it inside the interval', { timeout: 180_000 }, async () => {
  // The default interval (10 s): this test runs well within one.
  const ownGw = await startGateway(heldModules, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP } });
  const established = await fillWithRunningCalls(ownGw);
  const conns = [...established];
  try {
    // A newcomer's long call (the token holder's, or after its idle connection was closed, any
    // client's next one): its token cancels the oldest established call, so the count is back at
    // the cap and the newcomer holds that slot.
    const newcomer = await runningCall(ownGw);
    conns.push(newcomer);
    await closedNow(established[0]!);
    const before = cancelled;
    // The next newcomer, a quick GET with the token.
    const next = await RawConnection.open(ownGw.socketPath);
    conns.push(next);
    await next.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ownGw.auth.authorization}\r\n\r\n`);
    assert.equal((await next.readResponse()).status, 200);
    // Before: the first newcomer stayed "came in past the cap" for its connection's life, and the GET cancelled its call.
    assert.equal(cancelled, before, 'the call of a newcomer holding a slot within the cap was cancelled');
    assert.equal(newcomer.isClosed, false);
  } finally {
    for (const answer of waiting.splice(0)) answer({ ok: true, value: { content: 'done' } });
    for (const conn of conns) conn.close();
    await ownGw.close();
  }
});

test('a session cannot be parked past the cap to take the place made for a newcomer: the next GET does not cancel the newcomer\'s call', { timeout: 180_000 }, async () => {
  // The default interval (10 s): this test runs well within one.
  const ownGw = await startGateway(heldModules, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP } });
  const established = await fillWithRunningCalls(ownGw);
  const conns = [...established];
  let stream: SseStream | undefined;
  let sdk: Awaited<ReturnType<typeof connectClient>> | undefined;
  try {
    // A newcomer spends the interval: its token cancels the oldest established call, it takes that place.
    conns.push(await runningCall(ownGw));
    await closedNow(established[0]!);
    // A legacy SSE session past the cap (never the one closed for a newcomer), the interval spent:
    // before, it was opened there, and the place next made within the cap, though made for the
    // SDK client below, went to it, the oldest past the cap. Now it is refused there.
    stream = await SseStream.open(ownGw.socketPath, '/mcp/held/sse', ownGw.auth);
    assert.equal(stream.status, 503);
    // An established call ends: its connection is idle, the first to go for the next newcomer.
    waiting[1]!({ ok: true, value: { content: 'done' } });
    assert.equal((await established[1]!.readResponse()).status, 200);
    // The official SDK client connects (the idle connection is closed to make room for it) and calls a long tool.
    sdk = await connectClient(ownGw, 'held', 'streamable');
    await closedNow(established[1]!);
    const running = waiting.length;
    const before = cancelled;
    const call = sdk.client.callTool({ name: 'wait', arguments: {} }).then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    while (waiting.length === running) await new Promise((resolve) => setTimeout(resolve, 5));
    // The next newcomer, a quick GET with the token.
    const next = await RawConnection.open(ownGw.socketPath);
    conns.push(next);
    await next.write(`GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${ownGw.auth.authorization}\r\n\r\n`);
    assert.equal((await next.readResponse()).status, 200);
    // Before: the idle connection's place went to the session parked past the cap, the SDK
    // client's connection stayed past it, and the GET cancelled its call.
    assert.equal(cancelled, before, 'the call of a newcomer holding the place made for it was cancelled');
    waiting.at(-1)!({ ok: true, value: { content: 'done' } });
    assert.equal(await call, 'answered');
  } finally {
    for (const answer of waiting.splice(0)) answer({ ok: true, value: { content: 'done' } });
    stream?.disconnect();
    await sdk?.close();
    for (const conn of conns) conn.close();
    await ownGw.close();
  }
});

test('legacy SSE sessions cannot hold the places past the cap: opened there they are refused, and the official SDK client still gets in', { timeout: 180_000 }, async () => {
  // The default interval (10 s): this test runs well within one.
  const ownGw = await startGateway(heldModules, { connectionLimits: { headersTimeoutMs: 10_000, requestTimeoutMs: 20_000, maxConnections: CAP } });
  const established = await fillWithRunningCalls(ownGw);
  const streams: SseStream[] = [];
  try {
    // A token holder's sessions, one more than the places past the cap: the first cancels an
    // established call and takes its place; the rest find the interval spent.
    for (let i = 0; i < NEWCOMER_RESERVE + 1; i++) streams.push(await SseStream.open(ownGw.socketPath, '/mcp/held/sse', ownGw.auth));
    // Before: all 17 opened, the 16 places past the cap held by streams never closed for a
    // newcomer, so every newcomer was closed at its arrival ('fetch failed').
    const { client, close } = await connectClient(ownGw, 'held', 'streamable');
    try {
      assert.deepEqual((await client.callTool({ name: 'quick', arguments: {} })).content, [{ type: 'text', text: 'quick' }]);
    } finally {
      await close();
    }
    assert.deepEqual(streams.map((stream) => stream.status), [200, ...Array.from({ length: NEWCOMER_RESERVE }, () => 503)]);
  } finally {
    for (const stream of streams) stream.disconnect();
    await releaseAll(established.filter((conn) => !conn.isClosed));
    await ownGw.close();
  }
});

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
import { CallAbort } from '../../main/jsonrpc/index.js';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { STREAMABLE_HEADERS, connectClient, openSseSession, startMcpGateway, type McpGateway, type TransportKind } from './helpers.js';

/**
 * Cancelling a `tools/call` whose guest spins forever (the hand-written loop fixture, 60 s limit):
 * by `notifications/cancelled` and by the client going away, over Streamable HTTP and legacy SSE,
 * raw and through the official SDK client's AbortSignal. Each stop is measured and printed.
 */
let gw: McpGateway;
const rows: EdgeRow[] = [];
before(async () => {
  gw = await startMcpGateway(['spin', 'echo']);
  gw.gateway.onEdge((row) => rows.push(row));
});
after(async () => {
  await gw.close();
});

const spin = (): ModuleHandle => gw.registry.get('spin')!;
const call = (id: number | string, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
const loopCall = (id: number | string) => call(id, 'tools/call', { name: 'loop', arguments: {} });
const cancelled = (requestId: number | string, reason?: string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, ...(reason === undefined ? {} : { reason }) },
});

/** Resolves once the guest runs the call with this call-id (checked each turn of the event loop, no timer). */
async function running(callId: string): Promise<void> {
  while (spin().runningCallId !== callId) await new Promise((resolve) => setImmediate(resolve));
}

/** The registry's line that a running call was stopped, with the measured stop time, once it is written. */
async function stopLine(after: number): Promise<number> {
  for (;;) {
    const lines = gw.logs.filter((l) => /was cancelled while it ran; its instance stopped in/.test(l.message));
    if (lines.length > after) return lines[after]!.fields?.['stopMs'] as number;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function edgeRow(match: (row: EdgeRow) => boolean): Promise<EdgeRow> {
  for (;;) {
    const row = rows.find(match);
    if (row) return row;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The spin module answers again (a fresh instance), and another module answered while it spun. */
async function stillServes(label: string): Promise<void> {
  const after = await gw.post('/mcp/spin', call('after', 'tools/call', { name: 'echo', arguments: { label } }));
  assert.equal(after.status, 200);
  assert.deepEqual(JSON.parse(after.body).result, { content: [{ type: 'text', text: JSON.stringify({ label }) }] });
}

/** Calls the echo module while `spin` runs its guest: it must not wait. */
async function otherModuleAnswers(): Promise<number> {
  const started = performance.now();
  const res = await gw.post('/mcp/echo', call('other', 'tools/call', { name: 'echo', arguments: {} }));
  assert.equal(res.status, 200);
  assert.equal(spin().runningCallId !== undefined, true, 'the spin module was still running its guest');
  return performance.now() - started;
}

function stoppedCount(): number {
  return gw.logs.filter((l) => /was cancelled while it ran/.test(l.message)).length;
}

describe('Streamable HTTP', () => {
  test('notifications/cancelled stops the guest; the call is answered -32800 and its edge row says cancelled', async () => {
    const init = await gw.post('/mcp/spin', call(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } }));
    const session = init.headers['mcp-session-id'];
    assert.match(String(session), /^[0-9a-f]{32}$/, 'initialize names a session, the scope of cancellation');
    const headers = { 'mcp-session-id': String(session) };
    const stops = stoppedCount();
    const pending = gw.post('/mcp/spin', loopCall(5), headers);
    await running('5');
    const otherMs = await otherModuleAnswers();

    // The same id from another session (or from none) names another call: nothing stops.
    assert.equal((await gw.post('/mcp/spin', cancelled(5), { 'mcp-session-id': 'someone-else' })).status, 202);
    assert.equal((await gw.post('/mcp/spin', cancelled(5))).status, 202);
    assert.equal(spin().runningCallId, '5');

    const sentAt = performance.now();
    const note = await gw.post('/mcp/spin', cancelled(5, 'the user pressed stop'), headers);
    assert.equal(note.status, 202);
    const answer = await pending;
    const answeredMs = performance.now() - sentAt;
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), {
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32800, message: 'Request cancelled: notifications/cancelled (the user pressed stop)' },
    });
    const stopMs = await stopLine(stops);
    console.log(`# Streamable HTTP, notifications/cancelled: answered ${answeredMs.toFixed(1)} ms after the notification was sent; guest stopped in ${stopMs} ms; another module answered in ${otherMs.toFixed(1)} ms meanwhile`);
    const row = await edgeRow((r) => r.reason === 'cancelled: notifications/cancelled (the user pressed stop)');
    assert.equal(row.status, 200);
    assert.ok(rows.some((r) => r.reason === 'cancelled request 5' && r.status === 202), 'the notification row names the request');
    await stillServes('after notifications/cancelled');
  });

  test('the client going away stops the guest; the edge row is 499 cancelled', async () => {
    const stops = stoppedCount();
    const req = request({
      socketPath: gw.socketPath,
      path: '/mcp/spin',
      method: 'POST',
      headers: { ...gw.auth, ...STREAMABLE_HEADERS },
      agent: false,
    });
    req.on('error', () => {});
    req.end(JSON.stringify(loopCall(9)));
    await running('9');
    const goneAt = performance.now();
    req.destroy();
    const stopMs = await stopLine(stops);
    const row = await edgeRow((r) => r.reason === 'cancelled: the client went away');
    console.log(`# Streamable HTTP, client gone: guest stopped in ${stopMs} ms (${(performance.now() - goneAt).toFixed(1)} ms after the disconnect, row included)`);
    assert.equal(row.status, 499);
    assert.equal(row.path, '/mcp/spin');
    await stillServes('after the client went away');
  });
});

describe('legacy HTTP+SSE', () => {
  const openSession = () => openSseSession(gw, 'spin');

  test('notifications/cancelled stops the guest and the call is never answered on the stream', async () => {
    const { stream, post } = await openSession();
    try {
      const stops = stoppedCount();
      assert.equal(await post(loopCall(3)), 202);
      await running('3');
      const otherMs = await otherModuleAnswers();
      const sentAt = performance.now();
      assert.equal(await post(cancelled(3, 'no longer needed')), 202);
      const stopMs = await stopLine(stops);
      console.log(`# legacy SSE, notifications/cancelled: guest stopped in ${stopMs} ms (${(performance.now() - sentAt).toFixed(1)} ms after the notification was sent); another module answered in ${otherMs.toFixed(1)} ms meanwhile`);
      assert.ok(rows.some((r) => r.reason === 'cancelled request 3' && r.status === 202));
      // The next message on the stream answers the ping, not the cancelled call.
      assert.equal(await post(call(4, 'ping')), 202);
      const next = await stream.next();
      assert.deepEqual(next.kind === 'event' ? JSON.parse(next.data) : next, { jsonrpc: '2.0', id: 4, result: {} });
      await stillServes('after a legacy cancel');
    } finally {
      stream.response.destroy();
    }
  });

  test('the stream closing stops the guest of a call posted on it', async () => {
    const { stream, post } = await openSession();
    const stops = stoppedCount();
    assert.equal(await post(loopCall(11)), 202);
    await running('11');
    const closedAt = performance.now();
    stream.response.destroy();
    const stopMs = await stopLine(stops);
    console.log(`# legacy SSE, stream closed: guest stopped in ${stopMs} ms (${(performance.now() - closedAt).toFixed(1)} ms after the close)`);
    const line = gw.logs.filter((l) => /was cancelled while it ran/.test(l.message)).at(-1);
    assert.equal(line?.fields?.['module'], 'spin');
    await stillServes('after the stream closed');
  });
});

for (const kind of ['streamable', 'sse'] as const satisfies readonly TransportKind[]) {
  test(`the official SDK client's AbortSignal on callTool stops the guest (${kind === 'sse' ? 'SSEClientTransport' : 'StreamableHTTPClientTransport'})`, async () => {
    const { client, close } = await connectClient(gw, 'spin', kind);
    try {
      const stops = stoppedCount();
      const controller = new AbortController();
      const pending = client.callTool({ name: 'loop', arguments: {} }, undefined, { signal: controller.signal });
      await running(String(await runningId()));
      const abortedAt = performance.now();
      controller.abort();
      await assert.rejects(pending);
      const stopMs = await stopLine(stops);
      console.log(`# SDK client over ${kind}, AbortSignal: guest stopped in ${stopMs} ms (${(performance.now() - abortedAt).toFixed(1)} ms after abort())`);
      const result = await client.callTool({ name: 'echo', arguments: { again: true } });
      assert.deepEqual(result, { content: [{ type: 'text', text: '{"again":true}' }] });
    } finally {
      await close();
    }
  });
}

/** The call-id of whatever the spin module runs next (the SDK chooses its ids). */
async function runningId(): Promise<string> {
  for (;;) {
    const id = spin().runningCallId;
    if (id !== undefined) return id;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('CallAbort, the signal the gateway hands a module for each call', () => {
  test('aborts once, calls its listeners once in order, forgets removed and late ones', () => {
    const signal = new CallAbort();
    const heard: string[] = [];
    const removed = (): void => {
      heard.push('removed');
    };
    signal.addEventListener('abort', () => heard.push(`first ${String(signal.reason)}`));
    signal.addEventListener('abort', removed);
    signal.addEventListener('abort', () => heard.push('second'), { once: true });
    signal.removeEventListener('abort', removed);
    assert.equal(signal.aborted, false);
    signal.abort('why');
    signal.abort('again');
    signal.addEventListener('abort', () => heard.push('late'));
    assert.deepEqual(heard, ['first why', 'second']);
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'why');
  });
});

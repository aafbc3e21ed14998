import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runMcpStdio } from '../../main/cli/commands/mcp-stdio.js';
import { MAX_REQUESTS_IN_FLIGHT } from '../../main/cli/mcp-stdio/in-flight.js';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { REPO_ROOT, collect, exited, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';

/**
 * Cancelling through `chatty-gateway mcp-stdio`: the bridge relays lines concurrently, so a
 * `notifications/cancelled` reaches the gateway while the call it names runs, and the spinning
 * guest (the loop fixture, 60 s limit) stops. A real gateway in this process (so the test sees the
 * guest run and stop), the real command spawned by the official SDK's StdioClientTransport or by hand.
 */
const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));

let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['spin', 'echo']);
});
after(() => gw.close());

const spin = (): ModuleHandle => gw.registry.get('spin')!;
const call = (id: number | string, name: string, args: object = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const cancelled = (requestId: number | string) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'stop' } });

async function turn(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

/** The call-id the spin module's guest runs, once it runs one. */
async function runningCallId(): Promise<string> {
  for (;;) {
    const id = spin().runningCallId;
    if (id !== undefined) return id;
    await turn();
  }
}

function stoppedCount(): number {
  return gw.logs.filter((l) => /was cancelled while it ran/.test(l.message)).length;
}

/** The registry's measured stop time of the `n`-th stopped call, once its line is written. */
async function stopLine(n: number): Promise<number> {
  for (;;) {
    const lines = gw.logs.filter((l) => /was cancelled while it ran; its instance stopped in/.test(l.message));
    if (lines.length > n) return lines[n]!.fields?.['stopMs'] as number;
    await turn();
  }
}

test('the SDK client over StdioClientTransport: aborting callTool stops the spinning guest, and the next call works', { timeout: 180_000 }, async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', BIN, 'mcp-stdio', 'spin', '--runtime-dir', gw.runtimeDir],
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const stderr = collect(transport.stderr as PassThrough);
  const client = new Client({ name: 'chatty-stdio-cancel', version: '0.0.0' });
  await client.connect(transport);
  try {
    const stops = stoppedCount();
    const controller = new AbortController();
    const pending = client.callTool({ name: 'loop', arguments: {} }, undefined, { signal: controller.signal });
    await runningCallId();
    const abortedAt = performance.now();
    controller.abort('the user pressed stop');
    await assert.rejects(pending);
    const stopMs = await stopLine(stops);
    const totalMs = performance.now() - abortedAt;
    console.log(`# mcp-stdio, SDK AbortSignal: guest stopped in ${stopMs} ms after the notification reached the gateway; ${totalMs.toFixed(1)} ms after abort(), through the bridge`);
    // Without the concurrent relay the notification waits behind the call: 60 s, the loop's limit.
    // (Half the loop's limit: a loaded CI machine has taken 5.7 s through the bridge's spawned process.)
    assert.ok(totalMs < 30_000, `stopped ${totalMs.toFixed(0)} ms after abort()`);
    assert.equal(spin().runningCallId, undefined);
    assert.deepEqual(await client.callTool({ name: 'echo', arguments: { again: true } }), { content: [{ type: 'text', text: '{"again":true}' }] });
  } finally {
    await client.close();
  }
  assert.equal(await stderr, '');
});

describe('raw lines', () => {
  /** The bridge as a raw child on the spin module, its stdout read one JSON line at a time. */
  function bridge() {
    const child = spawnCli(['mcp-stdio', 'spin', '--runtime-dir', gw.runtimeDir]);
    const stderr = collect(child.stderr);
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    return {
      send: (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`),
      next: async (): Promise<{ id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } }> => {
        const { value, done } = await lines.next();
        assert.ok(!done, 'the bridge closed stdout before answering');
        return JSON.parse(value as string);
      },
      finish: async () => {
        child.stdin.end();
        const rest: string[] = [];
        for (let line = await lines.next(); !line.done; line = await lines.next()) rest.push(line.value as string);
        return { rest, stderr: await stderr, status: await exited(child) };
      },
    };
  }

  test('a ping is answered while a call spins; the cancellation answers the call -32800 under its id', { timeout: 180_000 }, async () => {
    const b = bridge();
    const stops = stoppedCount();
    b.send(call('spinning', 'loop'));
    assert.equal(await runningCallId(), 'spinning');
    b.send({ jsonrpc: '2.0', id: 'p', method: 'ping' });
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'p', result: {} });
    b.send(cancelled('spinning'));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'spinning', error: { code: -32800, message: 'Request cancelled: notifications/cancelled (stop)' } });
    await stopLine(stops);
    b.send(call('after', 'echo', { n: 1 }));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'after', result: { content: [{ type: 'text', text: '{"n":1}' }] } });
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('the client gone (stdout closed) while a call spins: the bridge exits 1 at once, and the gateway stops the guest', { timeout: 180_000 }, async () => {
    const child = spawnCli(['mcp-stdio', 'spin', '--runtime-dir', gw.runtimeDir]);
    const stderr = collect(child.stderr);
    const stops = stoppedCount();
    child.stdin.write(`${JSON.stringify(call('abandoned', 'loop'))}\n`);
    assert.equal(await runningCallId(), 'abandoned');
    child.stdout.destroy();
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'p', method: 'ping' })}\n`); // its answer finds stdout closed
    const [status, said] = await Promise.all([exited(child), stderr]);
    assert.deepEqual(status, { code: 1, signal: null });
    assert.match(said, /^chatty-gateway: mcp-stdio: stdout is closed, the client has gone \(.*EPIPE.*\)\n$/);
    await stopLine(stops); // its connection closed: the gateway cancelled the call
    assert.equal(spin().runningCallId, undefined);
  });

  test(`over ${MAX_REQUESTS_IN_FLIGHT} requests in flight the next waits its turn, not refused, and is answered once a slot frees; each cancelled call is answered under its own id`, { timeout: 180_000 }, async () => {
    const b = bridge();
    const ids = Array.from({ length: MAX_REQUESTS_IN_FLIGHT }, (_, i) => i + 1);
    for (const id of ids) b.send(call(id, 'loop'));
    await runningCallId(); // one runs, the others wait in the module's queue: none is answered
    b.send(call('one-more', 'echo', { n: 1 }));
    // Cancelled in reverse: every answer carries its own id, whatever order they come in.
    for (const id of [...ids].reverse()) b.send(cancelled(id));
    const answered = new Map<unknown, unknown>();
    for (const _ of [...ids, 'one-more']) {
      const answer = await b.next();
      answered.set(answer.id, answer.error ?? answer.result);
    }
    assert.deepEqual(answered.get('one-more'), { content: [{ type: 'text', text: '{"n":1}' }] }, 'the request past the bound waited its turn, then ran');
    answered.delete('one-more');
    assert.deepEqual([...answered.keys()].sort((x, y) => Number(x) - Number(y)), ids);
    for (const error of answered.values()) assert.deepEqual(error, { code: -32800, message: 'Request cancelled: notifications/cancelled (stop)' });
    b.send(call('after', 'echo', { n: 2 }));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'after', result: { content: [{ type: 'text', text: '{"n":2}' }] } });
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });
});

test('lines read after an initialize wait for its answer, so they carry the version and session it negotiated', async () => {
  const scratch = tempDir('chatty-stdio-barrier-');
  const dir = join(scratch.path, 'run');
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'gateway.token'), 'barrier-token', { mode: 0o600 });
  const arrivals: string[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ modules: [{ name: 'm', surfaces: ['/mcp/m'] }] }));
    }
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
      const sent = JSON.parse(body) as { id: number; method: string };
      arrivals.push(`${sent.method} ${req.headers['mcp-protocol-version'] ?? '-'} ${req.headers['mcp-session-id'] ?? '-'}`);
      const answer = (result: object): void => {
        res.writeHead(200, { 'content-type': 'application/json', ...(sent.method === 'initialize' ? { 'mcp-session-id': 'session-9' } : {}) });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: sent.id, result }));
      };
      // The initialize answer is held a while: a bridge without the barrier would send the ping meanwhile.
      if (sent.method === 'initialize') setTimeout(() => answer({ protocolVersion: '2025-06-18' }), 50);
      else answer({});
    });
  });
  server.listen(join(dir, 'gateway.sock'));
  await once(server, 'listening');
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
  const code = runMcpStdio({ module: 'm', runtimeDir: dir }, { stdin, stdout, stderr: new PassThrough() });
  try {
    stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })}\n${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
    assert.equal(JSON.parse((await lines.next()).value as string).id, 1);
    assert.equal(JSON.parse((await lines.next()).value as string).id, 2);
    stdin.end();
    assert.equal(await code, 0);
  } finally {
    server.close();
    scratch.remove();
  }
  assert.deepEqual(arrivals, ['initialize - -', 'ping 2025-06-18 session-9']);
});

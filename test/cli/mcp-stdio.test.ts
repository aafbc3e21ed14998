import assert from 'node:assert/strict';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runMcpStdio } from '../../main/cli/commands/mcp-stdio.js';
import { readFrames } from '../../main/cli/mcp-stdio/line-reader.js';
import { SseParser } from '../../main/cli/mcp-stdio/sse-parser.js';
import { serializeFrame } from '../../main/jsonrpc/index.js';
import { tempDir } from '../helpers/gateway.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { REPO_ROOT, collect, exited, firstLine, spawnCli } from '../helpers/cli.js';

/**
 * `chatty-gateway mcp-stdio`: the real command, spawned as an MCP client would (the official
 * SDK's StdioClientTransport) or by hand for raw lines, against a real `chatty-gateway serve`.
 */
const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));
const scratch = tempDir('chatty-bridge-');
const modulesDir = join(scratch.path, 'modules');

/** A `chatty-gateway serve --json` child and the paths of its ready line. */
interface Serving {
  child: ChildProcessWithoutNullStreams;
  runtimeDir: string;
  stop: () => Promise<void>;
}

/** `serve --json` in `runtimeDir`, or (undefined) in its default runtime directory under `env`. */
async function serve(runtimeDir: string | undefined, env: NodeJS.ProcessEnv = process.env, modules: string = modulesDir): Promise<Serving> {
  const where = runtimeDir === undefined ? [] : ['--runtime-dir', runtimeDir];
  const child = spawnCli(['serve', '--json', ...where, '--modules-dir', modules], env);
  const ready = JSON.parse(await firstLine(child)) as { event: string; socket: string };
  assert.equal(ready.event, 'ready');
  return {
    child,
    runtimeDir: dirname(ready.socket),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited(child);
    },
  };
}

let gateway: Serving;
before(async () => {
  const echo = await buildFixture('echo');
  writeModuleDir(modulesDir, 'echo', { component: echo });
  writeModuleDir(modulesDir, 'trap', { component: await buildFixture('trap') });
  writeModuleDir(modulesDir, 'hidden', { manifest: fixtureManifest('hidden').replace('mcp = true', 'mcp = false'), component: echo });
  gateway = await serve(join(scratch.path, 'run'));
});
after(async () => {
  await gateway.stop();
  scratch.remove();
});

/** The bridge as a raw child, with its stdout read one JSON line at a time. */
function bridge(module: string, runtimeDir: string = gateway.runtimeDir) {
  const child = spawnCli(['mcp-stdio', module, '--runtime-dir', runtimeDir]);
  const stderr = collect(child.stderr);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    stderr,
    send: (line: string | object) => child.stdin.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`),
    next: async (): Promise<unknown> => {
      const { value, done } = await lines.next();
      assert.ok(!done, 'the bridge closed stdout before answering');
      return JSON.parse(value as string) as unknown;
    },
    /** Ends stdin; resolves with what is left on stdout (must be nothing), stderr and the exit status. */
    finish: async () => {
      child.stdin.end();
      const rest: string[] = [];
      for (let line = await lines.next(); !line.done; line = await lines.next()) rest.push(line.value as string);
      return { rest, stderr: await stderr, status: await exited(child) };
    },
  };
}

const ping = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'ping' });
const call = (id: number, name: string, args: object = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/**
 * The official SDK client launching the bridge as a client configuration would: a command, its
 * arguments and extra environment (the SDK passes only HOME, PATH, SHELL, TERM, USER, LOGNAME
 * besides). Resolves with the client and, once closed, the bridge's stderr.
 */
async function sdkClient(bridgeArgs: readonly string[], env?: Record<string, string>): Promise<{ client: Client; close: () => Promise<string> }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', BIN, 'mcp-stdio', ...bridgeArgs],
    cwd: REPO_ROOT,
    stderr: 'pipe',
    ...(env ? { env } : {}),
  });
  const piped = transport.stderr;
  assert.ok(piped instanceof PassThrough); // the SDK hands it out before spawning, so nothing is missed
  const stderr = collect(piped);
  const client = new Client({ name: 'chatty-bridge-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await client.close();
      return stderr;
    },
  };
}

describe('chatty-gateway mcp-stdio with the SDK client', () => {
  test('initialize, tools/list and tools/call through StdioClientTransport spawning the real command', async () => {
    const { client, close } = await sdkClient(['echo', '--runtime-dir', gateway.runtimeDir]);
    let stderr: Promise<string> | undefined;
    try {
      assert.deepEqual(client.getServerVersion(), { name: 'echo', version: '1.0.0' });
      // The bridge relays to Streamable HTTP, which sends no list_changed: not advertised.
      assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
      const { tools } = await client.listTools();
      assert.deepEqual(tools.find((t) => t.name === 'echo'), {
        name: 'echo',
        description: 'Returns its arguments-json.',
        inputSchema: { type: 'object', additionalProperties: true },
      });
      const args = { text: 'héllo "world"\nline two', n: 3 };
      assert.deepEqual(await client.callTool({ name: 'echo', arguments: args }), { content: [{ type: 'text', text: JSON.stringify(args) }] });
      assert.deepEqual(await client.callTool({ name: 'fail', arguments: {} }), { content: [{ type: 'text', text: 'failed: it failed' }], isError: true });
      assert.deepEqual(await client.ping(), {});
    } finally {
      stderr = close();
    }
    assert.equal(await stderr, '');
  });

  test("without --runtime-dir it finds serve's default runtime directory (XDG_RUNTIME_DIR from the client's env)", async () => {
    const xdg = join(scratch.path, 'xdg');
    const own = await serve(undefined, { ...process.env, XDG_RUNTIME_DIR: xdg });
    try {
      assert.equal(own.runtimeDir, join(xdg, 'chatty-run'));
      const { client, close } = await sdkClient(['echo'], { XDG_RUNTIME_DIR: xdg });
      let stderr: Promise<string> | undefined;
      try {
        assert.deepEqual(await client.callTool({ name: 'echo', arguments: { found: 1 } }), { content: [{ type: 'text', text: '{"found":1}' }] });
      } finally {
        stderr = close();
      }
      assert.equal(await stderr, '');
    } finally {
      await own.stop();
    }
  });
});

describe('chatty-gateway mcp-stdio on raw lines', () => {
  test('a batch line is one POST, answered as one array line', async () => {
    const b = bridge('echo');
    b.send([ping(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, call(2, 'echo', { a: 1 })]);
    assert.deepEqual(await b.next(), [
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '{"a":1}' }] } },
    ]);
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('a notification gets no line: the next line answers the request after it', async () => {
    const b = bridge('echo');
    b.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    b.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
    b.send(ping('after'));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'after', result: {} });
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('a line that is not JSON gets -32700 with id null, and the bridge goes on', async () => {
    const b = bridge('echo');
    b.send('{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    b.send(ping(2));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 2, result: {} });
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('a line that is not UTF-8 gets -32700 too, without taking the lines around it', async () => {
    const b = bridge('echo');
    b.child.stdin.write(Buffer.concat([Buffer.from(`${JSON.stringify(ping(1))}\n`), Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from(`${JSON.stringify(ping(2))}\n`)]));
    // Lines are relayed concurrently: the answers come in any order.
    const answers = [await b.next(), await b.next(), await b.next()].map((a) => JSON.stringify(a)).sort();
    assert.deepEqual(answers, [
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
    ].map((a) => JSON.stringify(a)).sort());
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('JSON that is not JSON-RPC gets the gateway\'s Invalid Request', async () => {
    const b = bridge('echo');
    b.send({ hello: 'world' });
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('lines are relayed concurrently: each answer comes back once, under its own id', async () => {
    const b = bridge('echo');
    for (let id = 1; id <= 20; id++) b.send(id % 2 ? call(id, 'echo', { id }) : ping(id));
    const answers = new Map<number, unknown>();
    for (let n = 1; n <= 20; n++) {
      const answer = (await b.next()) as { id: number; result: unknown };
      assert.ok(!answers.has(answer.id), `answered ${answer.id} twice`);
      answers.set(answer.id, answer.result);
    }
    for (let id = 1; id <= 20; id++) assert.deepEqual(answers.get(id), id % 2 ? { content: [{ type: 'text', text: JSON.stringify({ id }) }] } : {});
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('stdin closed: requests already read are answered, then exit 0', async () => {
    const b = bridge('echo');
    b.send(call(1, 'echo', { last: true }));
    b.send(ping(2));
    b.child.stdin.end(); // before either answer has come back
    const answers = [await b.next(), await b.next()].sort((x, y) => (x as { id: number }).id - (y as { id: number }).id);
    assert.deepEqual(answers, [
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '{"last":true}' }] } },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('stdout closed under it (the client left): one stderr line, exit 1', async () => {
    const b = bridge('echo');
    b.child.stdout.destroy();
    b.send(ping(1));
    const [stderr, status] = await Promise.all([b.stderr, exited(b.child)]);
    assert.deepEqual(status, { code: 1, signal: null });
    assert.match(stderr, /^chatty-gateway: mcp-stdio: stdout is closed, the client has gone \(.*EPIPE.*\)\n$/);
  });

  test('a gateway error with a JSON-RPC body (a guest trap, HTTP 500) is passed on under its id', async () => {
    const b = bridge('trap');
    b.send(call(5, 'trap'));
    const answer = (await b.next()) as { id: number; error: { code: number; message: string } };
    assert.equal(answer.id, 5);
    assert.equal(answer.error.code, -32603);
    assert.match(answer.error.message, /^trap: .*unreachable/);
    assert.equal((await b.finish()).status.code, 0);
  });

  test('a line over the gateway\'s 10 MiB body limit is refused by the bridge, never sent nor held whole: under the id it begins with, else id null', async () => {
    const b = bridge('echo');
    const error = { code: -32000, message: 'mcp-stdio: this line is over 10 MiB (10485760 bytes), the most the gateway takes in a request body; it was not sent', data: { maxLineBytes: 10485760 } };
    b.send(call(6, 'echo', { pad: 'x'.repeat(10 * 1024 * 1024) }));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 6, error });
    b.send([ping(7), call(8, 'echo', { pad: 'x'.repeat(10 * 1024 * 1024) })]); // a batch: no one id to answer under
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: null, error });
    b.send(ping(9)); // the bridge goes on
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 9, result: {} });
    assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
  });

  test('a module gone mid-session: its 404 passes through under the id, or is addressed to each id of a batch', async () => {
    const own = await serve(join(scratch.path, 'run-module-gone'));
    const b = bridge('echo', own.runtimeDir);
    b.send(ping(1));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 1, result: {} });
    await own.stop();
    // The same runtime directory, serving only `trap` now.
    const trapOnly = join(scratch.path, 'modules-trap-only');
    writeModuleDir(trapOnly, 'trap', { component: readFileSync(join(modulesDir, 'trap', 'plugin.wasm')) });
    const again = await serve(own.runtimeDir, process.env, trapOnly);
    try {
      const notFound = { code: -32602, message: "module 'echo' not found" };
      b.send(ping(2));
      assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 2, error: notFound });
      // For a batch the gateway's 404 names no id (null): the bridge answers each id with its error.
      b.send([ping(3), { jsonrpc: '2.0', method: 'notifications/initialized' }, ping('four')]);
      assert.deepEqual(await b.next(), [
        { jsonrpc: '2.0', id: 3, error: notFound },
        { jsonrpc: '2.0', id: 'four', error: notFound },
      ]);
      assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
    } finally {
      await again.stop();
    }
  });

  test('the gateway stopping mid-session: errors for the ids, then a restarted gateway (new token) is followed', async () => {
    const own = await serve(join(scratch.path, 'run-restart'));
    const b = bridge('echo', own.runtimeDir);
    b.send(ping(1));
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 1, result: {} });
    const firstToken = readFileSync(join(own.runtimeDir, 'gateway.token'), 'utf8');

    await own.stop();
    b.send(ping(2));
    const lost = (await b.next()) as { id: number; error: { code: number; message: string } };
    assert.equal(lost.id, 2);
    assert.equal(lost.error.code, -32000);
    assert.match(lost.error.message, /^the gateway could not be reached: connect ENOENT /);

    const again = await serve(own.runtimeDir);
    try {
      assert.notEqual(readFileSync(join(own.runtimeDir, 'gateway.token'), 'utf8'), firstToken);
      b.send(call(3, 'echo', { back: true }));
      assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: '{"back":true}' }] } });
      assert.deepEqual(await b.finish(), { rest: [], stderr: '', status: { code: 0, signal: null } });
    } finally {
      await again.stop();
    }
  });
});

describe('chatty-gateway mcp-stdio refuses to start', () => {
  async function refused(module: string, runtimeDir: string): Promise<string> {
    const child = spawnCli(['mcp-stdio', module, '--runtime-dir', runtimeDir]);
    const [stdout, stderr, status] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
    assert.deepEqual(status, { code: 1, signal: null });
    assert.equal(stdout, '');
    assert.equal(stderr.split('\n').length, 2, `one line: ${stderr}`);
    return stderr;
  }
  const socketOf = (dir: string) => join(dir, 'gateway.sock');

  test('an unknown module, or one without mcp = true: a stderr line naming the MCP modules, exit 1', async () => {
    const served = `the gateway at ${socketOf(gateway.runtimeDir)} serves these modules over MCP: echo, trap`;
    assert.equal(await refused('nope', gateway.runtimeDir), `chatty-gateway: unknown module 'nope': ${served}\n`);
    assert.equal(await refused('hidden', gateway.runtimeDir), `chatty-gateway: unknown module 'hidden': ${served}\n`);
  });

  test('no gateway running: no runtime directory, or one without a socket', async () => {
    const missing = join(scratch.path, 'never-started');
    assert.equal(
      await refused('echo', missing),
      `chatty-gateway: no gateway is running: ${missing} does not exist (start one with \`chatty-gateway serve --runtime-dir ${missing}\`)\n`,
    );
    const empty = join(scratch.path, 'empty-run');
    mkdirSync(empty, { mode: 0o700 });
    assert.equal(
      await refused('echo', empty),
      `chatty-gateway: no gateway is running: no gateway.sock in ${empty} (start one with \`chatty-gateway serve --runtime-dir ${empty}\`)\n`,
    );
  });

  test('no gateway running: a killed gateway left its socket and token (connection refused)', async () => {
    const killed = await serve(join(scratch.path, 'run-killed'));
    killed.child.kill('SIGKILL');
    await exited(killed.child);
    assert.equal(
      await refused('echo', killed.runtimeDir),
      `chatty-gateway: no gateway is running: nothing listens on ${socketOf(killed.runtimeDir)} (ECONNREFUSED; start one with \`chatty-gateway serve --runtime-dir ${killed.runtimeDir}\`)\n`,
    );
  });
});

/**
 * The gateway answers every POST as JSON and keeps no sessions; an MCP server may instead answer
 * as an event stream and set `Mcp-Session-Id`. A plain HTTP server on a real Unix socket stands in
 * for such a server here, with runMcpStdio in-process on stream pairs.
 */
describe('runMcpStdio against a server that answers as SSE, and its readers', () => {
  test('events become lines, a batch is gathered into one array, the session and version headers are carried', async () => {
    const dir = join(scratch.path, 'sse-run');
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'gateway.token'), 'sse-token', { mode: 0o600 });
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      if (req.method === 'GET') {
        res.setHeader('content-type', 'application/json');
        return res.end(JSON.stringify({ modules: [{ name: 'streamer', surfaces: ['/mcp/streamer'] }] }));
      }
      let body = '';
      req.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => {
        const sent = JSON.parse(body) as { id?: number; method: string } | { id: number }[];
        if (!Array.isArray(sent) && sent.id === undefined) return res.writeHead(202).end();
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'session-1' });
        if (Array.isArray(sent)) {
          // One event per answer, the second split across writes and CRLF-terminated.
          res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: sent[0]!.id, result: 'a' })}\n\n`);
          res.write(': keep-alive\r\n\r\ndata: {"jsonrpc":"2.0",');
          return res.end(`\r\ndata: "id":${sent[1]!.id},"result":"b"}\r\n\r\n`);
        }
        const result = sent.method === 'initialize' ? { protocolVersion: '2025-06-18' } : 'ok';
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } })}\n\n`);
        res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: sent.id, result })}\n\n`);
      });
    });
    server.listen(join(dir, 'gateway.sock'));
    await once(server, 'listening');

    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
    const next = async () => JSON.parse((await lines.next()).value as string) as unknown;
    const code = runMcpStdio({ module: 'streamer', runtimeDir: dir }, { stdin, stdout, stderr });
    try {
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })}\n`);
      assert.deepEqual(await next(), { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } });
      assert.deepEqual(await next(), { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18' } });
      stdin.write(`${JSON.stringify([ping(2), ping(3)])}\n`);
      assert.deepEqual(await next(), [
        { jsonrpc: '2.0', id: 2, result: 'a' },
        { jsonrpc: '2.0', id: 3, result: 'b' },
      ]);
      stdin.end(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      assert.equal(await code, 0);
      assert.ok((await lines.next()).done);
      assert.equal(stderr.read(), null);
    } finally {
      server.close();
    }
    const posts = seen.filter((h) => h['content-type'] === 'application/json');
    assert.equal(posts.length, 3);
    assert.ok(seen.every((h) => h.authorization === 'Bearer sse-token'));
    assert.deepEqual(posts.map((h) => [h['mcp-session-id'], h['mcp-protocol-version']]), [
      [undefined, undefined],
      ['session-1', '2025-06-18'],
      ['session-1', '2025-06-18'],
    ]);
  });

  test('readFrames: one frame per line across chunks, with its size; a line not UTF-8 is one unreadable frame; one over the cap is too long, with the id it begins with', async () => {
    const input = new PassThrough();
    const frames: string[] = [];
    const done = readFrames(input, (line) => frames.push(line.kind === 'too-long' ? `too long, id ${JSON.stringify(line.id)}` : line.frame.kind === 'malformed' ? line.frame.reason : `${serializeFrame(line.frame)} ${line.bytes}`), 40);
    input.write('{"jsonrpc":"2.0",');
    input.write('"method":"a"}\n\n[1]\n7\n');
    input.write(Buffer.from([0xc3, 0x28, 0x0a])); // not UTF-8
    input.write(`{"id":"é",${'x'.repeat(50)}`); // over the cap before its newline: dropped up to the newline
    input.write('yyy\n');
    input.write(`${'z'.repeat(30)}`);
    input.write(`${'z'.repeat(30)}\n`); // over the cap in the chunk that ends it; no id (none of the line before's)
    input.write('{"jsonrpc":"2.0","method":"b"}\n');
    input.write(`{"jsonrpc":"2.0","id":7,"method":"m","params":"${'p'.repeat(40)}"}\n`);
    input.write(`{"params":{"id":1},"id":8,"method":"m","params":"${'p'.repeat(40)}"}\n`); // its id after an object: not read
    input.end('{"jsonrpc":"2.0","method":"c"}'); // the last line needs no newline
    await done;
    assert.deepEqual(frames, [
      '{"jsonrpc":"2.0","method":"a"} 30',
      '[1] 3',
      'shape',
      'parse',
      'too long, id "é"',
      'too long, id null',
      '{"jsonrpc":"2.0","method":"b"} 30',
      'too long, id 7',
      'too long, id null',
      '{"jsonrpc":"2.0","method":"c"} 30',
    ]);
  });

  test('SseParser: fields, comments, CR/LF/CRLF and chunk boundaries anywhere', () => {
    const stream = 'event: message\r\ndata: {"a":\r\ndata:1}\r\n\r\n: comment\n\ndata: x\r\rid: 7\nevent:ping\ndata\n\n';
    const expected = [
      { event: 'message', data: '{"a":\n1}' },
      { event: 'message', data: 'x' },
      { event: 'ping', data: '' },
    ];
    for (let cut = 0; cut <= stream.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(stream.slice(0, cut)), ...parser.push(stream.slice(cut)), ...parser.end()];
      assert.deepEqual(events, expected, `cut at ${cut}`);
    }
  });
});

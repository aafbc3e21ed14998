import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { AnswerTooLargeError } from '../../main/cli/mcp-stdio/gateway-http.js';
import { SseParser } from '../../main/cli/mcp-stdio/sse-parser.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';
import { stdioBridge } from './mcp-stdio-bridge.js';

/**
 * `mcp-stdio` against a broken upstream (a real HTTP server on a Unix socket in an owner-only
 * runtime directory, standing in for the gateway): what it answers must never leave a client's
 * request unanswered.
 */
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

/** A stand-in gateway: `GET /` lists module `echo`; every POST goes to `onPost`. */
async function upstream(onPost: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-upstream-'));
  chmodSync(dir, 0o700);
  writeFileSync(join(dir, 'gateway.token'), 'a'.repeat(64), { mode: 0o600 });
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ modules: [{ name: 'echo', surfaces: ['/mcp/echo'] }] }));
      return;
    }
    req.resume();
    req.on('end', () => onPost(req, res));
  });
  await new Promise<void>((resolve) => server.listen(join(dir, 'gateway.sock'), resolve));
  stop = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  };
  return dir;
}

const bridge = (runtimeDir: string) => stdioBridge(runtimeDir, 'echo');

test('a 2xx answer under an id never asked: relayed, and the request asked is answered an error saying so', { timeout: 180_000 }, async () => {
  const dir = await upstream((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"jsonrpc":"2.0","id":"other","result":{}}');
  });
  const b = bridge(dir);
  b.write({ jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'other', result: {} });
  const owed = await b.next();
  assert.equal(owed.id, 1);
  assert.equal(owed.error?.code, -32000);
  assert.match(owed.error?.message ?? '', /did not answer/);
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
});

/** An upstream answer that never ends: 1 MiB chunks as fast as the bridge takes them. */
function endless(contentType: string, prefix = '') {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': contentType });
    res.write(prefix);
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const more = (): void => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', more);
    };
    more();
  };
}

test('an answer body that never ends is cut at MAX_ANSWER_BYTES: the request is answered an error saying so, the next line served', { timeout: 180_000 }, async () => {
  let posts = 0;
  const dir = await upstream((req, res) => {
    if (posts++ === 0) return endless('application/json')(req, res);
    res.setHeader('content-type', 'application/json');
    res.end('{"jsonrpc":"2.0","id":2,"result":{}}');
  });
  const b = bridge(dir);
  b.write({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const cut = await b.next();
  assert.equal(cut.id, 1);
  assert.equal(cut.error?.code, -32000);
  assert.match(cut.error?.message ?? '', /the gateway's answer is over 128 MiB/);
  b.write({ jsonrpc: '2.0', id: 2, method: 'ping' });
  assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 2, result: {} });
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
});

test('an event that never ends is cut the same way', { timeout: 180_000 }, async () => {
  const dir = await upstream(endless('text/event-stream', 'data: '));
  const b = bridge(dir);
  b.write({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const cut = await b.next();
  assert.equal(cut.id, 1);
  assert.match(cut.error?.message ?? '', /the gateway's answer is over 128 MiB/);
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
});

test('a batch answered as events is held up to MAX_ANSWER_BYTES in all, not per event: past it every id is answered an error', { timeout: 180_000 }, async () => {
  // Four events of 40 MiB (each under the cap, 160 MiB together), then the stream is held open.
  const pad = 'x'.repeat(40 * 1024 * 1024);
  const dir = await upstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const id of [1, 2, 3, 4]) res.write(`event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"pad":"${pad}"}}\n\n`);
  });
  const b = bridge(dir);
  b.writeRaw(`${JSON.stringify([1, 2, 3, 4, 5].map((id) => ({ jsonrpc: '2.0', id, method: 'ping' })))}\n`);
  const answer = (await b.next()) as unknown as { id: number; error?: { code: number; message: string } }[];
  assert.ok(Array.isArray(answer), 'one array for the batch');
  assert.deepEqual(answer.map((a) => a.id).sort(), [1, 2, 3, 4, 5]);
  for (const a of answer) {
    assert.equal(a.error?.code, -32000, `id ${a.id}`);
    assert.match(a.error?.message ?? '', /the gateway's answer is over 128 MiB/);
  }
  assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
});

test('the event parser counts bytes, not characters, against its cap', () => {
  // 'é' is one UTF-16 unit and two UTF-8 bytes: 14 characters, 22 bytes.
  const parser = new SseParser(20);
  assert.throws(() => parser.push(`data: ${'é'.repeat(8)}`), AnswerTooLargeError);
  const within = new SseParser(22);
  assert.deepEqual(within.push(`data: ${'é'.repeat(8)}\n\n`), [{ event: 'message', data: 'é'.repeat(8) }]);
});

test('a chunk of many short events is read in time linear in its length (the next event is counted once per chunk)', () => {
  // 128 KiB of blank lines and 16,384 tiny events: counting what is left at every event's end
  // scanned the rest of the chunk each time (~4 s and ~1 s here); read once it takes milliseconds.
  // CPU time, not wall-clock (which a loaded machine stretches): 1 s is well under the 5 s it guards.
  const { result: events, cpuMs } = cpuDuringSync(() => {
    assert.deepEqual(new SseParser().push('\n'.repeat(128 * 1024)), []);
    return new SseParser().push('data:x\n\n'.repeat(16 * 1024));
  });
  assert.equal(events.length, 16 * 1024);
  assert.ok(cpuMs < 1_000, `took ${Math.round(cpuMs)} ms of CPU`);
  // What follows the last event's end still counts against the cap.
  const capped = new SseParser(40);
  assert.throws(() => capped.push(`data: a\n\ndata: ${'x'.repeat(40)}\n`), AnswerTooLargeError);
});

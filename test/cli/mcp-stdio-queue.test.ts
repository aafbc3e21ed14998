/**
 * `chatty-gateway mcp-stdio` never refuses a valid request for its own reasons: past
 * `MAX_REQUESTS_IN_FLIGHT` requests in flight, the next ones wait their turn (within the byte
 * budget) and are sent in the order they were read, while a `notifications/cancelled` is still read
 * and relayed at once; one naming a request still waiting drops it (answered -32800, never sent).
 * The bridge is the real command, a child process; a plain HTTP server on a real Unix socket
 * stands in for the gateway, holding every call until the test releases them.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { MAX_REQUESTS_IN_FLIGHT } from '../../main/cli/mcp-stdio/in-flight.js';
import { exited, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';

const scratch = tempDir('chatty-queue-');
after(() => scratch.remove());

interface Sent {
  id?: number;
  method: string;
  params?: { requestId?: number };
}

/** The stand-in: `initialize` and notifications answered at once; each call held until released; what it was sent, in order. */
async function queueGateway(dir: string) {
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'gateway.token'), 'queue-token', { mode: 0o600 });
  const sent: Sent[] = [];
  const held: (() => void)[] = [];
  const watchers: (() => void)[] = [];
  let releasing = false;
  const calls = (): Sent[] => sent.filter((m) => m.method === 'tools/call');
  const server = createServer((req, res) => {
    if (req.method === 'GET') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ modules: [{ name: 'q', surfaces: ['/mcp/q'] }] }));
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c)).on('end', () => {
      const message = JSON.parse(Buffer.concat(parts).toString('utf8')) as Sent;
      sent.push(message);
      for (const watcher of [...watchers]) watcher();
      if (message.id === undefined) return res.writeHead(202).end();
      const answer = (result: unknown) => (r: ServerResponse) => r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      if (message.method === 'initialize') return answer({ protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'q', version: '0' } })(res);
      const reply = () => answer({ content: [{ type: 'text', text: String(message.id) }] })(res);
      if (releasing) reply();
      else held.push(reply);
    });
  });
  server.listen(join(dir, 'gateway.sock'));
  await once(server, 'listening');
  return {
    sent,
    calls,
    /** Resolves once `test` holds of what was sent. */
    until(test: () => boolean): Promise<void> {
      return new Promise((resolve) => {
        const watcher = (): void => {
          if (!test()) return;
          watchers.splice(watchers.indexOf(watcher), 1);
          resolve();
        };
        watchers.push(watcher);
        watcher();
      });
    },
    /** Answers the oldest call held. */
    releaseOne: () => held.shift()?.(),
    release() {
      releasing = true;
      for (const reply of held.splice(0)) reply();
    },
    close: () => server.close(),
  };
}

test(`past ${MAX_REQUESTS_IN_FLIGHT} requests in flight the next wait their turn, none refused, sent in the order read; a cancellation is relayed at once, and one naming a waiting request drops it unsent`, { timeout: 180_000 }, async () => {
  const extra = 6;
  const total = MAX_REQUESTS_IN_FLIGHT + extra;
  const dropped = MAX_REQUESTS_IN_FLIGHT + 3; // a request that waits its turn, then is cancelled
  const dir = join(scratch.path, 'run');
  const gateway = await queueGateway(dir);
  const child = spawnCli(['mcp-stdio', 'q', '--runtime-dir', dir]);
  try {
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const answers: { id: number; result?: unknown; error?: { code: number; message: string } }[] = [];
    const answered = new Map<number, () => void>();
    const answerTo = (id: number) => new Promise<void>((resolve) => answered.set(id, resolve));
    const initialized = answerTo(0);
    const droppedAnswer = answerTo(dropped);
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const answer = JSON.parse(line) as (typeof answers)[number];
      answers.push(answer);
      answered.get(answer.id)?.();
    });

    const write = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    write({ id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'queue', version: '0' } } });
    await initialized;
    for (let id = 1; id <= total; id++) write({ id, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    write({ method: 'notifications/cancelled', params: { requestId: dropped, reason: 'changed my mind' } });

    // The calls the gateway holds stay in flight; the cancellation still reaches it.
    await Promise.all([gateway.until(() => gateway.calls().length >= MAX_REQUESTS_IN_FLIGHT && gateway.sent.some((m) => m.method === 'notifications/cancelled')), droppedAnswer]);
    assert.equal(gateway.calls().length, MAX_REQUESTS_IN_FLIGHT, 'no more than the bound were sent');
    const early = answers.filter((a) => a.id !== 0);
    assert.deepEqual(early.map((a) => a.id), [dropped], `only the cancelled waiting request is answered yet: ${JSON.stringify(early.slice(0, 3))}`);
    assert.equal(early[0]?.error?.code, -32800);
    assert.match(early[0]?.error?.message ?? '', /Request cancelled: notifications\/cancelled \(changed my mind\)/);

    // One slot freed at a time: the waiting requests go in the order they were read.
    const waited = Array.from({ length: extra }, (_, i) => MAX_REQUESTS_IN_FLIGHT + 1 + i).filter((id) => id !== dropped);
    for (const [i, id] of waited.entries()) {
      gateway.releaseOne();
      await gateway.until(() => gateway.calls().length >= MAX_REQUESTS_IN_FLIGHT + i + 1);
      assert.equal(gateway.calls().at(-1)?.id, id);
    }
    gateway.release();
    child.stdin.end();
    const [status] = await Promise.all([exited(child), once(lines, 'close')]);
    assert.deepEqual(status, { code: 0, signal: null }, stderr);
    assert.equal(gateway.calls().length, total - 1, 'the call cancelled while it waited was never sent');
    assert.deepEqual(answers.map((a) => a.id).sort((a, b) => a - b), Array.from({ length: total + 1 }, (_, i) => i), 'each request answered once');
    for (const answer of answers) if (answer.id !== dropped) assert.ok(answer.result !== undefined, JSON.stringify(answer));
  } finally {
    if (child.exitCode === null) child.kill();
    gateway.close();
  }
});

/**
 * `chatty-gateway mcp-stdio` holds a bounded number of bytes (issue 20's last note: up to 80 lines
 * × 33 MiB before): a client writing more than the byte budget gets backpressure — stdin is not
 * read while `MAX_HELD_BYTES` of lines are in flight — and every request is answered, nothing
 * refused. The bridge is the real command, a child process. A plain HTTP server on a real Unix
 * socket stands in for the gateway, so that the test can hold its answers: the lines stay in flight.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, test } from 'node:test';
import { MAX_HELD_BYTES } from '../../main/cli/mcp-stdio/in-flight.js';
import { MAX_LINE_BYTES } from '../../main/cli/mcp-stdio/line-reader.js';
import { exited, spawnCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';

const scratch = tempDir('chatty-budget-');
after(() => scratch.remove());

const MiB = 1024 * 1024;

/** A stand-in gateway serving one module, `held`: `initialize` answered at once, every call held until `release()`. */
async function holdingGateway(dir: string) {
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(join(dir, 'gateway.token'), 'budget-token', { mode: 0o600 });
  let releasing = false;
  let received = 0;
  const held: (() => void)[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      return res.end(JSON.stringify({ modules: [{ name: 'held', surfaces: ['/mcp/held'] }] }));
    }
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c)).on('end', () => {
      const body = Buffer.concat(parts);
      received += body.length;
      const sent = JSON.parse(body.toString('utf8')) as { id: number; method: string; params: { arguments?: { pad: string } } };
      const answer = (result: unknown) => (r: ServerResponse) => r.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: sent.id, result }));
      if (sent.method === 'initialize') return answer({ protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'held', version: '0' } })(res);
      const reply = () => answer({ content: [{ type: 'text', text: `${sent.id}:${sent.params.arguments?.pad.length}` }] })(res);
      if (releasing) reply();
      else held.push(reply);
    });
  });
  server.listen(join(dir, 'gateway.sock'));
  await once(server, 'listening');
  return {
    /** Bytes of request bodies the bridge has sent so far. */
    received: () => received,
    release() {
      releasing = true;
      for (const reply of held.splice(0)) reply();
    },
    close: () => server.close(),
  };
}

test(`a client writing more than ${MAX_HELD_BYTES / MiB} MiB of lines is read no further than the budget while they are in flight; then every request is answered, the initialize first`, { timeout: 180_000 }, async () => {
  const dir = join(scratch.path, 'run');
  const gateway = await holdingGateway(dir);
  const child = spawnCli(['mcp-stdio', 'held', '--runtime-dir', dir]);
  try {
    let stderr = '';
    child.stderr.setEncoding('utf8');
    const told = new Promise<number>((resolve) => {
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        const line = /mcp-stdio: (\d+) bytes of lines are in flight[^\n]*\n/.exec(stderr);
        if (line) resolve(Number(line[1]));
      });
    });
    const answers: { id: number; result: { content?: { text: string }[]; protocolVersion?: string } }[] = [];
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => answers.push(JSON.parse(line) as (typeof answers)[number]));

    const count = Math.ceil((MAX_HELD_BYTES + MAX_LINE_BYTES) / MiB) + 8; // well past what may be held
    const pad = 'x'.repeat(MiB);
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'budget', version: '0' } } })}\n`);
    let lastTaken = false;
    for (let id = 1; id <= count; id++) {
      const line = `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { pad } } })}\n`;
      child.stdin.write(line, id === count ? () => (lastTaken = true) : undefined);
    }

    // The stand-in holds every call: the budget fills, and the bridge says how much it holds.
    const held = await told;
    assert.ok(held >= MAX_HELD_BYTES && held <= MAX_HELD_BYTES + MAX_LINE_BYTES, `held ${held} bytes`);
    assert.ok(gateway.received() <= MAX_HELD_BYTES + MAX_LINE_BYTES, `${gateway.received()} bytes sent on`);
    assert.equal(lastTaken, false, 'the bridge stopped reading: the last lines still wait in the pipe');
    assert.deepEqual(answers.map((a) => a.id), [0], 'the initialize was answered; the calls wait');

    gateway.release();
    child.stdin.end();
    const [status] = await Promise.all([exited(child), once(lines, 'close')]);
    assert.deepEqual(status, { code: 0, signal: null }, stderr);
    assert.equal(answers[0]?.result.protocolVersion, '2025-06-18', 'the initialize is answered before the lines read after it are sent');
    assert.deepEqual(answers.map((a) => a.id).sort((a, b) => a - b), Array.from({ length: count + 1 }, (_, i) => i), 'each request answered once, none refused');
    for (const answer of answers.slice(1)) assert.equal(answer.result.content?.[0]?.text, `${answer.id}:${MiB}`);
    assert.equal(stderr.split('\n').filter(Boolean).length, 1, stderr);
  } finally {
    if (child.exitCode === null) child.kill();
    gateway.close();
  }
});

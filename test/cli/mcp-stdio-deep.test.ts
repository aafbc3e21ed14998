import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { runMcpStdio } from '../../main/cli/commands/mcp-stdio.js';
import { startMcpGateway, type McpGateway } from '../mcp/helpers.js';

/**
 * `mcp-stdio` and one valid request nested deeper than JSON.stringify can encode (16 KB of
 * brackets): before, the encode's RangeError was taken for "stdout is closed", every call in flight
 * was abandoned and the bridge exited 1. Now that line alone is answered with an error under its
 * id, and the session goes on.
 */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['spin']);
});
after(() => gw.close());

test('a request nested 100,000 deep is answered an error under its id; the call in flight and the next line are served, exit 0', { timeout: 20_000 }, async () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let said = '';
  stderr.setEncoding('utf8').on('data', (c: string) => (said += c));
  const lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
  const code = runMcpStdio({ module: 'spin', runtimeDir: gw.runtimeDir }, { stdin, stdout, stderr });
  const next = async (): Promise<{ id: unknown; result?: unknown; error?: { code: number; message: string } }> => {
    const { value, done } = await lines.next();
    assert.ok(!done, 'the bridge closed stdout before answering');
    return JSON.parse(value as string);
  };

  stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'running', method: 'tools/call', params: { name: 'loop', arguments: {} } })}\n`);
  while (gw.registry.get('spin')!.runningCallId !== 'running') await new Promise((resolve) => setImmediate(resolve));
  const depth = 100_000;
  stdin.write(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"loop","arguments":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}}\n`);
  const deep = await next();
  assert.equal(deep.id, 'deep');
  assert.equal(deep.error?.code, -32000);
  assert.match(deep.error?.message ?? '', /nested too deeply/);
  stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'ping' })}\n`);
  assert.deepEqual(await next(), { jsonrpc: '2.0', id: 'after', result: {} });
  stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'running', reason: 'done' } })}\n`);
  const running = await next();
  assert.equal(running.id, 'running');
  assert.equal(running.error?.code, -32800, 'the call in flight was still the client’s to cancel');
  stdin.end();
  assert.deepEqual({ code: await code, stderr: said }, { code: 0, stderr: '' });
});

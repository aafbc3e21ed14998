/**
 * `mcp-stdio` answers a line nesting more than 1,000 levels itself, as the gateway would (-32600
 * `Invalid Request: nested too deeply (more than 1000 levels)` under the line's top-level id, the
 * gateway's Dispatcher's rule), and never posts it. Before, it posted the line as it was and
 * relayed the gateway's answer: 10 MiB sent for nothing, and with the gateway unreachable the
 * request's id was lost (nothing owed could be read from it): one line on stderr, nothing on
 * stdout, and the client waited for its answer for ever.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOO_DEEP_MESSAGE } from '../../main/jsonrpc/index.js';
import { startMcpGateway } from '../mcp/helpers.js';
import { stdioBridge } from './mcp-stdio-bridge.js';

const refused = (id: string | number | null): object => ({ jsonrpc: '2.0', id, error: { code: -32600, message: TOO_DEEP_MESSAGE } });
const deepCall = (id: string, depth: number): string =>
  `{"method":"tools/call","params":{"name":"echo","arguments":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}},"jsonrpc":"2.0","id":"${id}"}\n`;

test('a line nested too deeply is answered -32600 under its id by the bridge itself, the gateway unreachable or not; nothing is posted', { timeout: 180_000 }, async () => {
  const gw = await startMcpGateway(['echo']);
  let stopped = false;
  try {
    const b = stdioBridge(gw.runtimeDir, 'echo');
    b.write({ jsonrpc: '2.0', id: 'warm', method: 'ping' });
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'warm', result: {} });
    const rows: string[] = [];
    const unsubscribe = gw.gateway.onEdge((row) => rows.push(row.path));

    b.writeRaw(deepCall('deep', 5_000));
    assert.deepEqual(await b.next(), refused('deep'));
    b.writeRaw(`${'['.repeat(2_000)}\n`);
    assert.deepEqual(await b.next(), refused(null));
    // Call-shaped without an id: Invalid Request under id null, as the gateway answers it; a
    // response is owed nothing.
    b.writeRaw(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":${'['.repeat(2_000)}}}\n`);
    assert.deepEqual(await b.next(), refused(null));
    b.writeRaw(`{"jsonrpc":"2.0","id":5,"result":${'['.repeat(2_000)}}\n`);
    b.write({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    assert.deepEqual(await b.next(), { jsonrpc: '2.0', id: 'after', result: {} });
    unsubscribe();
    // Before: the four lines went to the gateway, which refused them.
    assert.deepEqual(rows, ['/mcp/echo'], 'only the ping was posted');

    await gw.close();
    stopped = true;
    // Before: nothing on stdout (the id could not be read from what was posted), the client waiting for ever.
    b.writeRaw(deepCall('lost', 2_000));
    assert.deepEqual(await b.next(), refused('lost'));
    b.write({ jsonrpc: '2.0', id: 'gone', method: 'ping' });
    const gone = (await b.next()) as { id: string; error: { code: number; message: string } };
    assert.deepEqual([gone.id, gone.error.code], ['gone', -32000]);
    assert.match(gone.error.message, /^the gateway could not be reached/);
    assert.deepEqual(await b.finish(), { code: 0, stderr: '' });
  } finally {
    if (!stopped) await gw.close();
  }
});

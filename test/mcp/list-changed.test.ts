import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest } from '../helpers/wasm-fixtures.js';
import { connectClient, startMcpGateway, type McpGateway } from './helpers.js';

/**
 * `notifications/tools/list_changed` reaching the official MCP SDK client over legacy SSE when
 * its module is reloaded (the `echo` fixture's component swapped for the `slow` one, which has
 * one more tool) or comes online again; `tools/list` and `GET /` follow at once.
 */
describe('tools/list_changed to the official SDK client', { timeout: 180_000 }, () => {
  let gw: McpGateway;
  let dir: string;

  before(async () => {
    gw = await startMcpGateway(['echo', 'slow']);
    dir = gw.registry.get('echo')!.dir;
  });
  after(async () => {
    await gw?.close();
  });

  const index = async (): Promise<{ name: string; version: string }[]> => {
    const res = await unixRequest(gw.socketPath, { path: '/', headers: gw.auth });
    return (JSON.parse(res.body) as { modules: { name: string; version: string }[] }).modules;
  };

  test('an SSE session hears list_changed when its module is reloaded and when it comes online again; tools/list and GET / follow at once', async () => {
    const { client, close } = await connectClient(gw, 'echo', 'sse');
    const other = await connectClient(gw, 'slow', 'sse');
    try {
      assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: true } });
      const heard: string[] = [];
      let next: (() => void) | undefined;
      client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => {
        heard.push(n.method);
        next?.();
      });
      const otherHeard: string[] = [];
      other.client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void otherHeard.push(n.method));
      const notified = (): Promise<void> => new Promise((resolve) => (next = resolve));

      const before = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(!before.includes('slow'), before.join());

      // A new component and a new version: reloaded.
      writeFileSync(join(dir, 'plugin.wasm'), await buildFixture('slow'));
      writeFileSync(join(dir, 'module.toml'), fixtureManifest('echo').replace('version = "1.0.0"', 'version = "2.0.0"'));
      let heardReload = notified();
      await gw.registry.reload('echo');
      // GET / follows at once, before any notification is read.
      assert.equal((await index()).find((m) => m.name === 'echo')?.version, '2.0.0');
      await heardReload;
      assert.deepEqual(heard, ['notifications/tools/list_changed']);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'slow'), 'tools/list answers from the new instance');
      assert.equal((await client.callTool({ name: 'echo', arguments: { a: 1 } })).isError, undefined);

      // Unloaded, its session stays open; loaded again: it comes online, and the session hears it.
      await gw.registry.unload('echo');
      assert.equal((await index()).find((m) => m.name === 'echo'), undefined);
      heardReload = notified();
      await gw.registry.loadModule(dir);
      await heardReload;
      assert.deepEqual(heard, ['notifications/tools/list_changed', 'notifications/tools/list_changed']);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'slow'));

      // The other module's session heard nothing of echo's changes; its own reload reaches it.
      const otherReload = new Promise<void>((resolve) =>
        other.client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => {
          otherHeard.push(n.method);
          resolve();
        }),
      );
      await gw.registry.reload('slow');
      await otherReload;
      assert.deepEqual(otherHeard, ['notifications/tools/list_changed']);
      assert.equal(heard.length, 2);
    } finally {
      await close();
      await other.close();
    }
  });

  test('a Streamable HTTP client is not promised list_changed (it has no stream to hear it on) and sees the new tools at its next tools/list', async () => {
    const { client, close } = await connectClient(gw, 'slow', 'streamable');
    try {
      assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
      const tools = (await client.listTools()).tools.map((t) => t.name);
      writeFileSync(join(gw.registry.get('slow')!.dir, 'plugin.wasm'), await buildFixture('echo'));
      await gw.registry.reload('slow');
      const now = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('slow') && !now.includes('slow'), `${tools.join()} → ${now.join()}`);
    } finally {
      await close();
    }
  });
});

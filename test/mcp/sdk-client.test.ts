import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connectClient, startMcpGateway, type McpGateway, type TransportKind } from './helpers.js';

/** The official MCP SDK client against real plugin components, over both HTTP transports. */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['echo']);
});
after(async () => {
  await gw.close();
});

for (const kind of ['streamable', 'sse'] as const satisfies readonly TransportKind[]) {
  describe(`the SDK client over ${kind === 'sse' ? 'SSEClientTransport' : 'StreamableHTTPClientTransport'}`, () => {
    test('connects: the server is named and versioned from the manifest, tools advertised', async () => {
      const { client, close } = await connectClient(gw, 'echo', kind);
      try {
        assert.deepEqual(client.getServerVersion(), { name: 'echo', version: '1.0.0' });
        // listChanged only where it is sent: a legacy SSE session's stream; Streamable HTTP has none.
        assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: kind === 'sse' } });
        assert.deepEqual(await client.ping(), {});
        // The SSE client really holds a legacy session; the Streamable HTTP one holds none.
        assert.equal(gw.gateway.openSseSessions, kind === 'sse' ? 1 : 0);
      } finally {
        await close();
      }
    });

    test('lists the guest tools with their input schemas', async () => {
      const { client, close } = await connectClient(gw, 'echo', kind);
      try {
        const { tools } = await client.listTools();
        const echo = tools.find((t) => t.name === 'echo');
        assert.deepEqual(echo, {
          name: 'echo',
          description: 'Returns its arguments-json.',
          inputSchema: { type: 'object', additionalProperties: true },
        });
        assert.ok(tools.some((t) => t.name === 'fail'));
      } finally {
        await close();
      }
    });

    test('calls a tool: the guest gets the arguments JSON-encoded once', async () => {
      const { client, close } = await connectClient(gw, 'echo', kind);
      try {
        const args = { text: 'héllo "world"', n: 3, nested: { list: [1, null, true] } };
        const result = await client.callTool({ name: 'echo', arguments: args });
        assert.deepEqual(result, { content: [{ type: 'text', text: JSON.stringify(args) }] });
      } finally {
        await close();
      }
    });

    test("a guest tool-error is an isError tool result, '<kind>: <message>'", async () => {
      const { client, close } = await connectClient(gw, 'echo', kind);
      try {
        const result = await client.callTool({ name: 'fail', arguments: {} });
        assert.deepEqual(result, { content: [{ type: 'text', text: 'failed: it failed' }], isError: true });
      } finally {
        await close();
      }
    });
  });
}

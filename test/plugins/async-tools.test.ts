import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginCallError, ensureExamplesBuilt, type ModuleHandle, type ScanReport } from '../../main/plugins/index.js';
import { ToolSchemaError, checkedTools } from '../../main/plugins/handle/tool-schemas.js';
import { connectClient } from '../mcp/helpers.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { TEST_CACHE_DIR } from '../helpers/wasm-fixtures.js';

/**
 * Tools as people write them, in real components built by `plugin build` (componentize-js): an
 * `async invokeTool` awaiting a timer, its rejections, a tool whose schema is `{}`, and a plugin
 * whose schema is not a JSON Schema object. The two plugins are built once into a cache kept
 * between runs (`ensureExamplesBuilt` rebuilds only when their sources, the wrapper or
 * componentize-js change), then served to the official MCP SDK client.
 */
const ASYNC_TOOLS = `
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export const plugin = {
  metadata() {
    return { name: 'async-tools', version: '0.1.0', description: 'async tools', requestedCapabilities: ['logging'], configKeys: [] };
  },
  listTools() {
    return [
      { name: 'wait', description: 'Awaits a timer, then answers.', parametersSchema: '{}' },
      { name: 'reject', description: 'An async tool that throws.', parametersSchema: JSON.stringify({ type: 'object', properties: {} }) },
      { name: 'refuse', description: 'An async tool that throws a tool-error.', parametersSchema: JSON.stringify({ properties: { why: { type: 'string' } } }) },
      { name: 'reject-string', description: 'Returns a rejected Promise of a string.', parametersSchema: '{}' },
      { name: 'hang', description: 'Awaits a Promise nothing will settle.', parametersSchema: '{}' },
    ];
  },
  async invokeTool(call) {
    const args = JSON.parse(call.argumentsJson);
    switch (call.name) {
      case 'wait': {
        const started = Date.now();
        await sleep(args.ms ?? 10);
        return { content: 'waited ' + (Date.now() - started >= (args.ms ?? 10) ? 'enough' : 'too little') };
      }
      case 'reject':
        await sleep(1);
        throw new TypeError('the upstream answered 503');
      case 'refuse':
        await null;
        throw { kind: 'invalid-arguments', message: 'why must be a string' };
      case 'reject-string':
        return Promise.reject('plain text');
      case 'hang':
        await new Promise(() => {});
        return { content: 'never' };
      default:
        throw { kind: 'unknown-tool', message: call.name };
    }
  },
};
`;

const BAD_SCHEMA = `
export const plugin = {
  metadata() {
    return { name: 'bad-schema', version: '0.1.0', description: '', requestedCapabilities: [], configKeys: [] };
  },
  listTools() {
    return [
      { name: 'fine', description: '', parametersSchema: '{}' },
      { name: 'stringly', description: '', parametersSchema: JSON.stringify({ type: 'string' }) },
    ];
  },
  invokeTool() {
    return { content: '' };
  },
};
`;

function writePlugin(parent: string, name: string, source: string): void {
  const dir = join(parent, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n`);
  writeFileSync(join(dir, 'src', 'plugin.js'), source);
}

describe('async tools and tool schemas, in components built by plugin build', () => {
  let root: string;
  let registry: ModuleRegistry;
  let report: ScanReport;
  let handle: ModuleHandle;
  let gw: RunningGateway;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-async-tools-'));
    writePlugin(root, 'async-tools', ASYNC_TOOLS);
    writePlugin(root, 'bad-schema', BAD_SCHEMA);
    const started = performance.now();
    const modulesDir = await ensureExamplesBuilt(root, { cacheDir: join(root, '.examples-cache') }); // this run's own: never shared with another run
    console.log(`# plugins built (or found in the cache) in ${Math.round(performance.now() - started)} ms`);
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log() {} } });
    report = await registry.scanDirectory(modulesDir);
    handle = registry.get('async-tools')!;
    gw = await startGateway(registry);
  });
  after(async () => {
    await gw?.close();
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const call = (name: string, args: object = {}) => handle.invokeTool({ name, argumentsJson: JSON.stringify(args), callId: name });

  it('an async tool answers once its Promise resolves (a timer awaited in the guest)', async () => {
    assert.ok(handle, 'async-tools is loaded');
    assert.deepEqual(await call('wait', { ms: 30 }), { ok: true, value: { content: 'waited enough', usage: undefined } });
  });

  it("a rejected Promise is the tool's error, its message kept; the instance is kept", async () => {
    const restarts = handle.stats.restarts;
    assert.deepEqual(await call('reject'), { ok: false, error: { kind: 'failed', message: 'TypeError: the upstream answered 503' } });
    assert.deepEqual(await call('refuse'), { ok: false, error: { kind: 'invalid-arguments', message: 'why must be a string' } });
    assert.deepEqual(await call('reject-string'), { ok: false, error: { kind: 'failed', message: 'plain text' } });
    assert.equal(handle.stats.traps, 0);
    assert.equal(handle.stats.restarts, restarts);
    assert.deepEqual(await call('wait', { ms: 1 }), { ok: true, value: { content: 'waited enough', usage: undefined } });
  });

  it('an async tool awaiting a timer is stopped by a cancel like any other (its instance replaced)', async () => {
    const controller = new AbortController();
    const pending = handle.invokeTool({ name: 'wait', argumentsJson: '{"ms":60000}', callId: 'long-wait' }, { signal: controller.signal });
    while (handle.runningCallId !== 'long-wait') await new Promise((resolve) => setImmediate(resolve));
    const abortedAt = performance.now();
    controller.abort();
    await assert.rejects(pending, (err: unknown) => err instanceof PluginCallError && err.kind === 'cancelled');
    console.log(`# an async tool awaiting a 60 s timer: cancelled ${(performance.now() - abortedAt).toFixed(1)} ms after abort()`);
    assert.deepEqual(await call('wait', { ms: 1 }), { ok: true, value: { content: 'waited enough', usage: undefined } });
  });

  it('a Promise that nothing will settle traps (the engine has nothing left to run); the next call gets a fresh instance', async () => {
    await assert.rejects(call('hang'), (err: unknown) => err instanceof PluginCallError && err.kind === 'trap');
    assert.deepEqual(await call('wait', { ms: 1 }), { ok: true, value: { content: 'waited enough', usage: undefined } });
  });

  for (const kind of ['streamable', 'sse'] as const) {
    it(`the official SDK client (${kind}) lists the tools, {} served as {"type":"object"}, and gets isError results`, async () => {
      const { client, close } = await connectClient(gw, 'async-tools', kind);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((t) => [t.name, t.inputSchema]),
          [
            ['wait', { type: 'object' }],
            ['reject', { type: 'object', properties: {} }],
            ['refuse', { type: 'object', properties: { why: { type: 'string' } } }],
            ['reject-string', { type: 'object' }],
            ['hang', { type: 'object' }],
          ],
        );
        assert.deepEqual(await client.callTool({ name: 'wait', arguments: { ms: 5 } }), { content: [{ type: 'text', text: 'waited enough' }] });
        assert.deepEqual(await client.callTool({ name: 'reject', arguments: {} }), {
          content: [{ type: 'text', text: 'failed: TypeError: the upstream answered 503' }],
          isError: true,
        });
      } finally {
        await close();
      }
    });
  }

  it("a plugin whose tool schema is not a JSON Schema object is refused at load, naming the tool", () => {
    assert.equal(registry.get('bad-schema'), undefined);
    const failed = report.failed.find((f) => f.dir.endsWith('bad-schema'));
    assert.ok(failed, JSON.stringify(report.failed));
    assert.equal(failed.reason, `tool 'stringly': its parametersSchema says "type": "string"; a tool's arguments are a JSON object, so it must be "object" (or left out)`);
    assert.equal(report.loaded.map((l) => l.name).join(), 'async-tools');
  });
});

describe('checkedTools: what a tool schema must be', () => {
  const tool = (parametersSchema: string, name = 't') => ({ name, description: '', parametersSchema });
  const refusal = (parametersSchema: string): string => {
    try {
      checkedTools([tool(parametersSchema)]);
    } catch (err) {
      assert.ok(err instanceof ToolSchemaError);
      return err.message;
    }
    assert.fail(`${parametersSchema} was accepted`);
  };

  it('adds "type":"object" in front when the schema names no type, and keeps the rest as written', () => {
    assert.deepEqual(checkedTools([tool('{}', 'a'), tool('{"properties":{"a":{"type":"number"}},"required":["a"]}', 'b'), tool('{"type":"object","additionalProperties":false}', 'c')]).map((t) => t.parametersSchema), [
      '{"type":"object"}',
      '{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}',
      '{"type":"object","additionalProperties":false}',
    ]);
  });

  it('refuses what is not JSON, not an object, another type, or bad properties/required, naming the tool', () => {
    assert.match(refusal('{type: object}'), /^tool 't': its parametersSchema is not JSON \(/);
    assert.equal(refusal('[]'), `tool 't': its parametersSchema is an array, not a JSON Schema object such as {"type":"object","properties":{…}}`);
    assert.equal(refusal('true'), `tool 't': its parametersSchema is a boolean (true), not a JSON Schema object such as {"type":"object","properties":{…}}`);
    assert.equal(refusal('null'), `tool 't': its parametersSchema is null, not a JSON Schema object such as {"type":"object","properties":{…}}`);
    assert.match(refusal('{"type":["object","null"]}'), /says "type": \["object","null"\]/);
    assert.equal(refusal('{"properties":[]}'), `tool 't': its parametersSchema has "properties" that is an array, not an object`);
    assert.equal(refusal('{"required":[1]}'), `tool 't': its parametersSchema has "required" that is not a list of property names`);
  });
});

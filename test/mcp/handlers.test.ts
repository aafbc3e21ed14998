import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dispatchOnce, parseFrame, type TransportFrame } from '../../main/jsonrpc/index.js';
import type { CallableModule, ModuleTool, ModuleToolOutcome } from '../../main/gateway/index.js';
import { httpAnswerOf, mcpDispatcher } from '../../main/gateway/mcp/index.js';

/**
 * The handler set on its own, against a module stand-in, for what a real guest cannot be made to
 * do on demand: a bad `parameters-schema`, and each way a call can fail outside the guest.
 */
function fakeModule(tools: ModuleTool[], invoke: () => Promise<ModuleToolOutcome>): CallableModule {
  return { name: 'fake', version: '9.9.9', description: '', protocols: { mcp: true, a2a: false }, listTools: async () => tools, invokeTool: invoke };
}

async function ask(module: CallableModule, method: string, params?: unknown, onError: (err: unknown) => void = () => {}) {
  const frame = await dispatchOnce(mcpDispatcher(module, onError), parseFrame(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })));
  assert.ok(frame && frame.kind === 'message');
  return frame.message as { result?: unknown; error?: { code: number; message: string } };
}

/** A PluginCallError as main/plugins throws it (the gateway only reads `kind` and `message`). */
function pluginError(kind: string, message: string): Error {
  return Object.assign(new Error(message), { kind });
}

describe('tools/list', () => {
  test('a parameters-schema that is not a JSON object becomes {"type":"object","properties":{}}', async () => {
    const tools = [
      { name: 'a', description: 'not JSON', parametersSchema: '{type: object' },
      { name: 'b', description: 'an array', parametersSchema: '[1]' },
      { name: 'c', description: 'empty', parametersSchema: '' },
      { name: 'd', description: 'kept', parametersSchema: '{"type":"object","required":["x"]}' },
    ];
    const { result } = await ask(fakeModule(tools, async () => ({ ok: true, value: { content: '' } })), 'tools/list');
    const fallback = { type: 'object', properties: {} };
    assert.deepEqual(result, {
      tools: [
        { name: 'a', description: 'not JSON', inputSchema: fallback },
        { name: 'b', description: 'an array', inputSchema: fallback },
        { name: 'c', description: 'empty', inputSchema: fallback },
        { name: 'd', description: 'kept', inputSchema: { type: 'object', required: ['x'] } },
      ],
    });
  });

  test('a list-tools that times out is -32603 with status 500', async () => {
    const module = fakeModule([], async () => ({ ok: true, value: { content: '' } }));
    module.listTools = async () => {
      throw pluginError('timeout', 'list-tools ran past its 1000 ms limit');
    };
    const frame = (await dispatchOnce(mcpDispatcher(module, () => {}), parseFrame('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))) as TransportFrame;
    assert.ok(frame.kind === 'message' && 'error' in frame.message);
    assert.deepEqual(frame.message.error, { code: -32603, message: 'timeout: list-tools ran past its 1000 ms limit' });
    assert.equal(httpAnswerOf(frame.message.error)?.status, 500);
  });
});

describe('tools/call failures outside the guest', () => {
  const cases = [
    ['output_too_large', 502, -32603, 'tool output over the 1 MiB cap'],
    ['trap', 500, -32603, 'trap: wasm unreachable'],
    ['crashed', 500, -32603, 'crashed: wasm unreachable'],
    ['unloaded', 500, -32603, 'unloaded: wasm unreachable'],
    ['credit_refused', undefined, -32000, 'wasm unreachable'],
  ] as const;
  for (const [kind, status, code, message] of cases) {
    test(`${kind}: ${code}, status ${status ?? 'unchanged (200)'}`, async () => {
      const module = fakeModule([], async () => {
        throw pluginError(kind, 'wasm unreachable');
      });
      const frame = (await dispatchOnce(mcpDispatcher(module, () => {}), parseFrame('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}'))) as TransportFrame;
      assert.ok(frame.kind === 'message' && 'error' in frame.message);
      assert.deepEqual(frame.message.error, { code, message });
      assert.equal(httpAnswerOf(frame.message.error)?.status, status);
    });
  }

  test('busy (the module holds its cap of waiting calls): -32000 "busy: …", status 503, Retry-After 1 s', async () => {
    const message = 'busy: module fake has 64 calls waiting; try again later';
    const module = fakeModule([], async () => {
      throw pluginError('busy', message);
    });
    const frame = (await dispatchOnce(mcpDispatcher(module, () => {}), parseFrame('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}'))) as TransportFrame;
    assert.ok(frame.kind === 'message' && 'error' in frame.message);
    assert.deepEqual(frame.message.error, { code: -32000, message });
    assert.deepEqual(httpAnswerOf(frame.message.error), { status: 503, retryAfterSeconds: 1 });
  });

  test('the output-cap message never carries the guest text', async () => {
    const module = fakeModule([], async () => {
      throw pluginError('output_too_large', 'x'.repeat(5000));
    });
    const { error } = await ask(module, 'tools/call', { name: 't' });
    assert.equal(error?.message, 'tool output over the 1 MiB cap');
  });

  test('an unexpected error is a bare Internal error (500) and goes to onError', async () => {
    const seen: unknown[] = [];
    const boom = new TypeError('host bug');
    const module = fakeModule([], async () => {
      throw boom;
    });
    const { error } = await ask(module, 'tools/call', { name: 't' }, (err) => seen.push(err));
    assert.deepEqual(error, { code: -32603, message: 'Internal error' });
    assert.deepEqual(seen, [boom]);
  });

  test('a long failure message is cut to one short line', async () => {
    const module = fakeModule([], async () => {
      throw pluginError('trap', `line one\n${'y'.repeat(1000)}`);
    });
    const { error } = await ask(module, 'tools/call', { name: 't' });
    assert.ok(error && error.message.length <= 'trap: '.length + 300 && !error.message.includes('\n'));
  });
});

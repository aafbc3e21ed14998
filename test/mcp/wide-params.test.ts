/**
 * The MCP handlers' params schemas were zod loose objects, which copy every member they do not
 * name into the value they give: a `tools/call` (or `initialize`, or `notifications/cancelled`)
 * whose params carried 600,000 extra members cost ~3 s of the gateway's main thread on top of
 * its JSON.parse (every client stalled). The handlers read only the members they name, so the
 * schemas now look at those and no others (zod's default object, which strips the rest unread).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dispatchOnce, messageFrame } from '../../main/jsonrpc/index.js';
import type { CallableModule } from '../../main/gateway/index.js';
import { mcpDispatcher } from '../../main/gateway/mcp/index.js';
import { wideObject } from '../helpers/wide-object.js';

/** A module stand-in: the decoding of params is what is looked at here, not a guest. */
const module: CallableModule = {
  name: 'fake',
  version: '1.0.0',
  description: '',
  protocols: { mcp: true, a2a: false },
  listTools: async () => [],
  invokeTool: async (request) => ({ ok: true, value: { content: request.argumentsJson } }),
};

for (const [method, named] of [
  ['tools/call', { name: 'echo', arguments: { text: 'hi' } }],
  ['initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } }],
] as const) {
  test(`${method} with params of many extra members is answered without listing them`, async () => {
    const { value: params, listed } = wideObject(named);
    const answer = await dispatchOnce(mcpDispatcher(module, () => {}), messageFrame({ jsonrpc: '2.0', id: 1, method, params }));
    assert.ok(answer?.kind === 'message' && 'result' in answer.message, JSON.stringify(answer));
    if (method === 'tools/call') assert.deepEqual(answer.message.result, { content: [{ type: 'text', text: '{"text":"hi"}' }] });
    assert.equal(listed(), 0, `params' members were listed ${listed()} times`);
  });
}

test('notifications/cancelled with params of many extra members is read without listing them', async () => {
  const { value: params, listed } = wideObject({ requestId: 7 });
  const answer = await dispatchOnce(mcpDispatcher(module, () => {}), messageFrame({ jsonrpc: '2.0', method: 'notifications/cancelled', params }));
  assert.equal(answer, undefined);
  assert.equal(listed(), 0, `params' members were listed ${listed()} times`);
});

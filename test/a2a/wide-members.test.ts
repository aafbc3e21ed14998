/**
 * The A2A wire's schemas were zod loose objects, which copy every member they do not name: an
 * A2A request (its envelope, its params, its message) or a runner's answer carrying hundreds of
 * thousands of extra members cost seconds of the gateway's main thread besides the parse (the
 * owned-task check reads the params twice). What the gateway reads is named; the other members
 * are now left unread (the body is forwarded as it came, never re-encoded from these values).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcRequestEnvelope, isRpcResponse, malformedTaskIdsOf, taskIdsOf } from '../../main/gateway/a2a/wire.js';
import { wideObject } from '../helpers/wide-object.js';

test('a request envelope with many extra members is read without listing them', () => {
  const { value, listed } = wideObject({ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} });
  const parsed = RpcRequestEnvelope.safeParse(value);
  assert.ok(parsed.success);
  assert.equal(parsed.data.method, 'message/send');
  assert.equal(listed(), 0, `listed ${listed()} times`);
});

test('params and a message with many extra members: their task ids are read without listing them', () => {
  const message = wideObject({ taskId: 't-1', referenceTaskIds: ['t-2'] });
  const params = wideObject({ id: 't-3', message: message.value });
  const item = { jsonrpc: '2.0', id: 1, method: 'message/send', params: params.value };
  assert.deepEqual(taskIdsOf(item), ['t-3', 't-1', 't-2']);
  assert.deepEqual(malformedTaskIdsOf(item), []);
  assert.equal(params.listed() + message.listed(), 0, `listed ${params.listed()} + ${message.listed()} times`);
});

test("a runner's answer with many extra members is checked without listing them", () => {
  const answer = wideObject({ jsonrpc: '2.0', id: 1, result: {} });
  const error = wideObject({ code: 1, message: 'no' });
  assert.ok(isRpcResponse(answer.value));
  assert.ok(isRpcResponse({ jsonrpc: '2.0', id: 1, error: error.value }));
  assert.ok(!isRpcResponse({ jsonrpc: '2.0', id: 1 }), 'neither result nor error');
  assert.ok(!isRpcResponse({ jsonrpc: '2.0', id: 1, result: 1, error: { code: 1, message: 'x' } }), 'both');
  assert.equal(answer.listed() + error.listed(), 0, `listed ${answer.listed()} + ${error.listed()} times`);
});

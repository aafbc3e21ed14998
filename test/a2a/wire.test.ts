/**
 * What the gateway reads of a request body before anything else: the task ids it names (for the
 * role refusal), in every spelling the SDK's runner accepts, and a batch's length cap.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_BATCH_ITEMS, malformedTaskIdsOf, rpcBodyOf, taskIdsOf } from '../../main/gateway/a2a/wire.js';

describe('taskIdsOf', () => {
  it('reads camelCase, snake_case, numbers, and the 1.0 resource name', () => {
    assert.deepEqual(taskIdsOf({ params: { id: 'a', taskId: 'b', task_id: 'c', name: 'tasks/d/pushNotificationConfigs/x' } }), ['a', 'b', 'c', 'd']);
    assert.deepEqual(taskIdsOf({ params: { message: { taskId: 'a', task_id: 'b', referenceTaskIds: ['c', 1], reference_task_ids: ['e'] } } }), ['a', 'b', 'c', '1', 'e']);
    assert.deepEqual(taskIdsOf({ params: { message: { taskId: 42 } } }), ['42']);
  });

  it('reads an item that is not a valid envelope, and a message that is not an object does not hide the rest', () => {
    assert.deepEqual(taskIdsOf({ id: true, method: 7, params: { id: 'a' } }), ['a']);
    assert.deepEqual(taskIdsOf({ params: { taskId: 'a', message: 'text' } }), ['a']);
    assert.deepEqual(taskIdsOf(7), []);
    assert.deepEqual(taskIdsOf([{ params: { id: 'a' } }]), []);
  });
});

describe('malformedTaskIdsOf', () => {
  it('accepts strings, numbers and null (absent to the runner as here); names every other value with its type', () => {
    assert.deepEqual(malformedTaskIdsOf({ params: { id: 'a', taskId: 3, task_id: null, name: 'tasks/x', message: { taskId: null, referenceTaskIds: ['a', 1] } } }), []);
    assert.deepEqual(malformedTaskIdsOf({ params: { id: ['a'], taskId: {}, task_id: false, name: 7, message: { task_id: [], reference_task_ids: 'a', referenceTaskIds: [null] } } }), [
      'params.id is an array, not a string or a number',
      'params.taskId is an object, not a string or a number',
      'params.task_id is a boolean, not a string or a number',
      'params.message.task_id is an array, not a string or a number',
      'params.message.referenceTaskIds[0] is null, not a string or a number',
      'params.message.reference_task_ids is a string, not an array',
      'params.name is a number, not a string',
    ]);
    assert.deepEqual(taskIdsOf({ params: { id: ['a'], message: { referenceTaskIds: [['b']] } } }), [], 'never read as ids: refused instead');
  });
});

describe('rpcBodyOf', () => {
  it('skips a leading UTF-8 BOM, as JSON body parsers do', () => {
    const body = rpcBodyOf(Buffer.from('\uFEFF{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"a"}}'));
    assert.equal(body?.items[0]?.method, 'tasks/get');
    assert.equal(rpcBodyOf(Buffer.from('nope')), undefined);
  });

  it(`keeps an item as it came next to its envelope (undefined when it is not a valid one)`, () => {
    const body = rpcBodyOf(Buffer.from('[{"id":true,"method":"m"},{"id":1,"method":"m"}]'));
    assert.deepEqual(body?.items.map((item) => item?.id), [undefined, 1]);
    assert.deepEqual(body?.raw, [{ id: true, method: 'm' }, { id: 1, method: 'm' }]);
  });

  it(`a batch past MAX_BATCH_ITEMS is tooLong and none of its items is read`, () => {
    const at = rpcBodyOf(Buffer.from(JSON.stringify(Array(MAX_BATCH_ITEMS).fill({ id: 1, method: 'm' }))));
    assert.deepEqual([at?.tooLong, at?.items.length, at?.raw.length], [false, MAX_BATCH_ITEMS, MAX_BATCH_ITEMS]);
    const over = rpcBodyOf(Buffer.from(JSON.stringify(Array(MAX_BATCH_ITEMS + 1).fill({ id: 1, method: 'm' }))));
    assert.deepEqual(over, { batch: true, tooLong: true, tooDeep: false, items: [], raw: [] });
  });
});

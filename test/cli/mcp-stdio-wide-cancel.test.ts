/**
 * The bridge reads each `notifications/cancelled` line twice (to drop the named call's POST, and
 * to let a queued one go): its params schema was a zod loose object, which copied every member
 * it did not name, so one line of params with hundreds of thousands of extra members cost the
 * bridge seconds per reading. It now reads `requestId` and `reason` and leaves the rest unread.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageFrame } from '../../main/jsonrpc/index.js';
import { cancellationOf } from '../../main/cli/mcp-stdio/running-calls.js';
import { wideObject } from '../helpers/wide-object.js';

test('a cancellation whose params carry many extra members is read without listing them', () => {
  const { value: params, listed } = wideObject({ requestId: 7, reason: 'user' });
  assert.deepEqual(cancellationOf(messageFrame({ jsonrpc: '2.0', method: 'notifications/cancelled', params })), {
    id: 7,
    reason: 'notifications/cancelled (user)',
  });
  assert.equal(listed(), 0, `params' members were listed ${listed()} times`);
});

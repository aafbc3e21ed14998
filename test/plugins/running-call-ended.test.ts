import assert from 'node:assert/strict';
import { it } from 'node:test';
import { running } from '../helpers/running-call.js';
import { loadFixtures } from '../helpers/wasm-fixtures.js';
it('running() (test/helpers): a call that ended before it was seen running fails running() instead of hanging', { timeout: 180_000 }, async () => {
  const fx = await loadFixtures([{ name: 'slow', kind: 'slow' }]);
  const slow = fx.registry.get('slow')!;
  const call = slow.invokeTool({ name: 'slow', argumentsJson: '1', callId: 'quick' });
  await call;
  await assert.rejects(running(slow, 'quick', call), /ended before it was seen running/);
  await fx.close();
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError, type Admission, type ModuleHandle } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

describe('the credit gate', () => {
  let fx: LoadedFixtures;
  let verdict: (module: string, tool: string) => Admission | Promise<Admission>;
  const asked: { module: string; tool: string; callId: string; caller?: string | undefined }[] = [];
  let slow: ModuleHandle;

  before(async () => {
    verdict = () => true;
    fx = await loadFixtures([{ name: 'slow', kind: 'slow' }], {
      meter: {
        admit(module, call) {
          asked.push({ module, ...call });
          return verdict(module, call.tool);
        },
      },
    });
    slow = fx.registry.get('slow')!;
  });
  after(() => fx.close());

  const invoke = (name: string, argumentsJson = '"x"', caller?: string) =>
    slow.invokeTool({ name, argumentsJson, callId: `c-${asked.length}`, caller });

  it('admits with true or {ok: true}, and passes module, tool, call id and caller', async () => {
    verdict = () => ({ ok: true });
    assert.equal((await invoke('echo', '"x"', 'client-a')).ok, true);
    assert.deepEqual(asked.at(-1), { module: 'slow', tool: 'echo', callId: 'c-0', caller: 'client-a' });
  });

  it('refuses with the meter\'s reason, before the module lock: a refusal never queues', async () => {
    verdict = () => true;
    // Holds the module's lock for 3 s. Proven by order, not by a clock: the refusal comes while
    // the running call has not answered (a refusal queued behind the lock would come after it).
    let busyAnswered = false;
    const busy = invoke('slow', '3000').finally(() => (busyAnswered = true));
    await new Promise((resolve) => setImmediate(resolve));
    verdict = (_m, tool) => (tool === 'echo' ? { ok: false, reason: 'balance too low: 0 tokens' } : true);
    await assert.rejects(invoke('echo'), (err: unknown) => {
      assert.ok(err instanceof PluginCallError);
      assert.equal(err.kind, 'credit_refused');
      assert.equal(err.message, 'balance too low: 0 tokens');
      return true;
    });
    assert.equal(busyAnswered, false, 'refused without waiting for the running call');
    assert.equal(slow.queued, 0);
    assert.equal((await busy).ok, true);
  });

  it('never touches the guest on a refusal', async () => {
    verdict = () => false;
    const callsBefore = slow.stats.calls;
    await assert.rejects(invoke('echo'), (err: unknown) => err instanceof PluginCallError && err.kind === 'credit_refused' && /refused by the credit meter/.test(err.message));
    assert.equal(slow.stats.calls, callsBefore);
  });

  it('awaits an asynchronous meter, and a meter that throws refuses', async () => {
    verdict = () => new Promise((resolve) => setTimeout(() => resolve({ ok: false, reason: 'later: no' }), 10));
    await assert.rejects(invoke('echo'), (err: unknown) => err instanceof PluginCallError && err.message === 'later: no');
    verdict = () => {
      throw new Error('ledger offline');
    };
    await assert.rejects(invoke('echo'), (err: unknown) => err instanceof PluginCallError && err.kind === 'credit_refused' && /credit check failed: ledger offline/.test(err.message));
  });

  it('is not consulted for metadata and list-tools', async () => {
    verdict = () => false;
    const before = asked.length;
    assert.equal((await slow.metadata()).name, 'fixture-slow');
    assert.ok((await slow.listTools()).some((t) => t.name === 'slow'));
    assert.equal(asked.length, before);
  });
});

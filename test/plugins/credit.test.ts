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
    const busy = invoke('slow', '400'); // holds the module's lock
    await new Promise((resolve) => setImmediate(resolve));
    verdict = (_m, tool) => (tool === 'echo' ? { ok: false, reason: 'balance too low: 0 tokens' } : true);
    const started = performance.now();
    await assert.rejects(invoke('echo'), (err: unknown) => {
      assert.ok(err instanceof PluginCallError);
      assert.equal(err.kind, 'credit_refused');
      assert.equal(err.message, 'balance too low: 0 tokens');
      return true;
    });
    assert.ok(performance.now() - started < 200, 'refused without waiting for the running call');
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

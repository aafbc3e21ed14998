import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginCallError, PluginLoadError, RetiringHandle, type CreditMeter, type ModuleChange, type ModuleHandle } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

/**
 * Modules come and go while calls run: `reload` swaps a new instance in once it has loaded, the
 * old one finishes what it was given; a failed reload keeps the old one; `onChange` tells.
 *
 * Which instance answered is told by the fixture's `config` tool: it answers the `[config]` value
 * of the key it is given, and each version of the module says another `version`. Calls are held
 * "in flight" deterministically by the credit meter, which every `invokeTool` awaits first: a call
 * whose id starts with `held-` waits there until the test opens the gate.
 */
describe('ModuleRegistry: reload and unload while calls are in flight', () => {
  let root: string;
  let dir: string;
  let registry: ModuleRegistry;
  const logs: { level: string; message: string; fields?: Record<string, unknown> | undefined }[] = [];
  let gate: { open: () => void; opened: Promise<void> };
  const newGate = (): typeof gate => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };
  const meter: CreditMeter = { admit: (_module, call) => (call.callId.startsWith('held-') ? gate.opened.then(() => true) : true) };

  const writeVersion = (version: string): void => {
    writeFileSync(join(dir, 'module.toml'), fixtureManifest('live', `\n[config]\nversion = "${version}"\n`));
  };
  /** The `version` of the instance that answers. */
  const versionOf = async (handle: ModuleHandle, callId: string): Promise<string> => {
    const outcome = await handle.invokeTool({ name: 'config', argumentsJson: 'version', callId });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    return outcome.value.content;
  };
  const live = (): ModuleHandle => {
    const handle = registry.get('live');
    assert.ok(handle, 'live is served');
    return handle;
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-live-reload-'));
    dir = writeModuleDir(root, 'live', { component: await buildFixture('slow') });
    writeVersion('v1');
    gate = newGate();
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, meter, logger: { log: (level, message, fields) => logs.push({ level, message, fields }) } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("loadModule says 'served', building and buildFailed say 'pending', each seen by list()/pending() in the listener", async () => {
    const seen: (ModuleChange & { listed: boolean; pending: string | undefined })[] = [];
    const stop = registry.onChange((change) =>
      seen.push({ ...change, listed: registry.get(change.name) !== undefined, pending: registry.pending().find((p) => p.name === change.name)?.state }),
    );
    registry.building('live');
    await registry.loadModule(dir);
    registry.building('other');
    registry.buildFailed('other', 'no compiler');
    stop();
    registry.building('unheard');
    assert.deepEqual(seen, [
      { name: 'live', change: 'pending', listed: false, pending: 'building' },
      { name: 'live', change: 'served', listed: true, pending: undefined },
      { name: 'other', change: 'pending', listed: false, pending: 'building' },
      { name: 'other', change: 'pending', listed: false, pending: 'failed' },
    ]);
    assert.equal(await versionOf(live(), 'first'), 'v1');
  });

  it('reload swaps the instance once the new one has loaded: calls given to the old one finish there, later calls go to the new one, none lost', async () => {
    const old = live();
    gate = newGate();
    // Held in flight on the old instance across the whole reload.
    const held = Array.from({ length: 8 }, (_, i) => versionOf(old, `held-${i}`));
    writeVersion('v2');
    const atSwap: { change: string; served: ModuleHandle | undefined; inFlight: number; lookedUpBefore?: Promise<string> }[] = [];
    const stop = registry.onChange((change) => {
      // A request that looked the module up just before the swap calls it a moment later: still the old instance's.
      atSwap.push({ change: change.change, served: registry.get('live'), inFlight: old instanceof RetiringHandle ? old.callsInFlight : -1, lookedUpBefore: versionOf(old, 'just-before-the-swap') });
    });
    const reloading = registry.reload('live');
    // Until the new instance has loaded, the old one serves.
    assert.equal(registry.get('live'), old);
    assert.equal(await versionOf(live(), 'while-loading'), 'v1');
    await reloading;
    stop();
    assert.equal(atSwap.length, 1);
    assert.equal(atSwap[0]!.change, 'reloaded');
    assert.notEqual(atSwap[0]!.served, old, 'get() shows the new instance inside the listener');
    assert.ok(atSwap[0]!.inFlight >= 8, `the old instance had its calls in flight at the swap (${atSwap[0]!.inFlight})`);
    const fresh = live();
    assert.notEqual(fresh, old);
    const after = await Promise.all(Array.from({ length: 8 }, (_, i) => versionOf(live(), `after-${i}`)));
    assert.deepEqual(after, Array(8).fill('v2'));
    gate.open();
    assert.deepEqual(await Promise.all(held), Array(8).fill('v1'), 'every held call answered by the old instance');
    assert.equal(await atSwap[0]!.lookedUpBefore, 'v1');
    // Its calls done, the old instance closes: a straggler finds it unloaded, the new one serves.
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(versionOf(old, 'too-late'), (err: unknown) => err instanceof PluginCallError && err.kind === 'unloaded');
    assert.equal(await versionOf(live(), 'still'), 'v2');
  });

  it('a failed reload keeps the old instance serving and says why in one log line', async () => {
    const before = live();
    const logged = logs.length;
    writeFileSync(join(dir, 'plugin.wasm'), 'not a component');
    await assert.rejects(registry.reload('live'), PluginLoadError);
    writeFileSync(join(dir, 'module.toml'), '[module\n');
    await assert.rejects(registry.reload('live'), PluginLoadError);
    assert.equal(registry.get('live'), before);
    assert.equal(await versionOf(live(), 'after-failures'), 'v2');
    const lines = logs.slice(logged).filter((l) => /reload/.test(l.message));
    assert.equal(lines.length, 2, JSON.stringify(lines));
    for (const line of lines) {
      assert.equal(line.level, 'warn');
      assert.equal(line.fields?.['module'], 'live');
      assert.match(line.message, /^reload failed, the previous instance keeps serving: /);
      assert.doesNotMatch(line.message, /\n/);
    }
    writeFileSync(join(dir, 'plugin.wasm'), await buildFixture('slow'));
    writeVersion('v3');
  });

  it('reloads of one module run in turn, and the last one wins', async () => {
    const first = registry.reload('live');
    writeVersion('v4');
    const second = registry.reload('live');
    await Promise.all([first, second]);
    assert.equal(await versionOf(live(), 'after-two'), 'v4');
  });

  it('a module renamed in its module.toml is not reloaded under its old name', async () => {
    writeFileSync(join(dir, 'module.toml'), fixtureManifest('renamed'));
    await assert.rejects(registry.reload('live'), /now names 'renamed'/);
    assert.equal(await versionOf(live(), 'not-renamed'), 'v4');
    writeVersion('v4');
  });

  it('reloading a module that is not loaded is refused', async () => {
    await assert.rejects(registry.reload('nothing'), /cannot reload 'nothing': no such module is loaded/);
  });

  it("unload with finishCalls: new calls find it gone at once, the calls it was given finish; 'unloaded' is said", async () => {
    const handle = live();
    gate = newGate();
    const held = versionOf(handle, 'held-unload');
    const seen: ModuleChange[] = [];
    const stop = registry.onChange((change) => seen.push(change));
    const unloading = registry.unload('live', { finishCalls: true });
    assert.equal(registry.get('live'), undefined);
    assert.deepEqual(seen, [{ name: 'live', change: 'unloaded' }]);
    gate.open();
    assert.equal(await held, 'v4');
    assert.equal(await unloading, true);
    await assert.rejects(versionOf(handle, 'after-unload'), (err: unknown) => err instanceof PluginCallError && err.kind === 'unloaded');
    // Loaded again: 'served' once more.
    await registry.loadModule(dir);
    stop();
    assert.deepEqual(seen.map((c) => c.change), ['unloaded', 'served']);
    assert.equal(await versionOf(live(), 'back'), 'v4');
  });

  it('a plain unload stops the module now: its calls in flight reject unloaded, none hangs', async () => {
    const handle = live();
    gate = newGate();
    const held = versionOf(handle, 'held-plain');
    await registry.unload('live');
    gate.open();
    await assert.rejects(held, (err: unknown) => err instanceof PluginCallError && err.kind === 'unloaded');
  });
});

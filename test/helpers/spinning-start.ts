import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ComponentCache, type CompiledComponent } from '../../main/plugins/component-cache.js';
import { ModuleHandle, type ModuleHandleInit } from '../../main/plugins/handle/index.js';
import { buildFixture, loadFixtures } from './wasm-fixtures.js';

/** What tests of engine starts that fail build their handles from. */
export interface SpinningStart {
  /** A loaded echo module's handle init: the base each test's handle varies. */
  echoInit: ModuleHandleInit;
  /** The `start-spins` fixture compiled: a start given it never finishes instantiating. */
  spinning: CompiledComponent;
  /** The `loop` fixture compiled: it starts at once, and its tool `loop` never returns. */
  looping: CompiledComponent;
  /** A handle on `echoInit` with no tool record and `init` over it; closed by `close()`. */
  handle(init: Partial<ModuleHandleInit>): ModuleHandle;
  close(): Promise<void>;
}

/** Loads the echo fixture and compiles `start-spins` and `loop` (in a cache of their own under `prefix`). */
export async function spinningStart(prefix: string): Promise<SpinningStart> {
  const fx = await loadFixtures([{ name: 'echo', kind: 'echo' }]);
  assert.deepEqual(fx.report.failed, []);
  const echoInit = (fx.registry.get('echo') as unknown as { init: ModuleHandleInit }).init;
  const cacheDir = mkdtempSync(join(tmpdir(), prefix));
  const cache = new ComponentCache(cacheDir);
  const spinning = await cache.compile(await cache.prepare(await buildFixture('start-spins')), 256);
  const looping = await cache.compile(await cache.prepare(await buildFixture('loop')), 256);
  const made: ModuleHandle[] = [];
  return {
    echoInit,
    spinning,
    looping,
    handle(init) {
      const handle = new ModuleHandle({ ...echoInit, toolRecord: undefined, ...init });
      made.push(handle);
      return handle;
    },
    async close() {
      await Promise.all(made.map((h) => h.close()));
      await cache.close();
      rmSync(cacheDir, { recursive: true, force: true });
      await fx.close();
    },
  };
}

/**
 * A plugin loaded, called and unloaded over and over (a folder that comes and goes under
 * `serve --watch`, an embedder's plugin manager): each load starts a worker thread (its engine is
 * resident) and watches the grants file it was granted in, each unload must end both and leave
 * nothing behind. After 200 rounds the process's
 * threads are back to what they were, its active handles and timers too, and its RSS has not
 * grown by a round's worth each time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { componentDigest, ModuleRegistry } from '../../main/plugins/index.js';
import { GrantsFile } from '../../main/plugins/grants/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const ROUNDS = 200;
let root: string;
let registry: ModuleRegistry;
let dir: string;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'chatty-load-unload-'));
  const echo = await buildFixture('echo');
  // Granted in the grants file: each load also watches the file for the grant being taken back.
  dir = writeModuleDir(root, 'churn', { manifest: fixtureManifest('churn', '[files]\nroot = "data"\n'), component: echo, extra: { 'data/x': 'x' } });
  const file = join(root, 'plugin-grants.json');
  new GrantsFile(file).remember('churn', componentDigest(echo), [{ capability: 'file', detail: 'read files under ./data' }]);
  registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} }, engineIdleMs: 0, grants: { file, mode: 'deny' } });
});
after(async () => {
  await registry.close();
  rmSync(root, { recursive: true, force: true });
});

/** The process's threads (Linux: the kernel's count). */
const threads = (): number => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);
const resources = (): string[] => process.getActiveResourcesInfo().sort();

const round = async (i: number): Promise<void> => {
  await registry.loadModule(dir);
  const answer = await registry.get('churn')!.invokeTool({ name: 'echo', argumentsJson: `{"i":${i}}`, callId: `c${i}` });
  assert.deepEqual(answer, { ok: true, value: { content: `{"i":${i}}`, usage: undefined } });
  assert.equal(await registry.unload('churn'), true);
};

it(`${ROUNDS} loads, calls and unloads leave no thread, handle or timer behind, and RSS near where it was`, { timeout: 180_000 }, async () => {
  // Warm: the compile caches, the toolchain worker (it checks each load's JavaScript and stops after
  // 5 idle seconds: the rounds follow each other closer than that, so it is up at both counts).
  for (let i = 0; i < 10; i++) await round(i);
  const baseline = { threads: threads(), resources: resources(), rss: process.memoryUsage.rss() };
  for (let i = 0; i < ROUNDS; i++) await round(i);
  const now = { threads: threads(), resources: resources(), rss: process.memoryUsage.rss() };
  // A thread or two comes and goes with V8's own work (its platform, the toolchain worker); one per round would be 200.
  assert.ok(now.threads <= baseline.threads + 2, `threads: ${baseline.threads} before, ${now.threads} after ${ROUNDS} rounds`);
  // None more than before (a port the warm-up left may have closed since): one per round would be 200.
  for (const kind of new Set(now.resources)) {
    const count = (list: string[]) => list.filter((r) => r === kind).length;
    assert.ok(count(now.resources) <= count(baseline.resources), `${kind}: ${count(baseline.resources)} before, ${count(now.resources)} after`);
  }
  const grownMb = (now.rss - baseline.rss) / 2 ** 20;
  console.log(`# RSS ${(baseline.rss / 2 ** 20).toFixed(1)} MiB before, ${(now.rss / 2 ** 20).toFixed(1)} MiB after ${ROUNDS} rounds (${grownMb.toFixed(1)} MiB)`);
  assert.ok(grownMb < 64, `RSS grew ${grownMb.toFixed(1)} MiB over ${ROUNDS} rounds`);
});

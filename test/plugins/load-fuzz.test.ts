/**
 * A short fuzz run of the plugin load path on every test run (fixed seeds, so a failure replays);
 * `npm run fuzz:plugins` runs it for longer. One registry, one sentinel module, every input loaded
 * through `ModuleRegistry` in turn: see load-fuzz-properties.ts for the rules each load must keep.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PluginLoadError } from '../../main/plugins/index.js';
import {
  SLACK_MS,
  headerCases,
  manifestCases,
  mutantCases,
  openHarness,
  runLoadFuzz,
  watCases,
  witCases,
  within,
  type LoadCase,
  type LoadFuzzHarness,
} from './load-fuzz-properties.js';

describe('fuzz: the plugin load path', () => {
  let harness: LoadFuzzHarness;

  before(async () => {
    harness = await openHarness();
  });

  after(async () => {
    await harness.close(); // also: no worker thread outlives registry.close()
  });

  it('mutated fixture components (bit flips, splices, sections moved, sizes and counts made huge)', async () => {
    assert.equal((await runLoadFuzz(harness, mutantCases, { numRuns: 25, seed: 1 })).numRuns, 25);
  });

  it('random bytes and sections behind a valid component header', async () => {
    assert.equal((await runLoadFuzz(harness, headerCases, { numRuns: 15, seed: 1 })).numRuns, 15);
  });

  it('odd module.toml texts over intact components', async () => {
    assert.equal((await runLoadFuzz(harness, manifestCases, { numRuns: 20, seed: 1 })).numRuns, 20);
  });

  it('core modules from a small WAT grammar (memories, tables, odd exports, start functions)', async () => {
    assert.equal((await runLoadFuzz(harness, watCases({ spin: false }), { numRuns: 10, seed: 1 })).numRuns, 10);
  });

  it('WIT worlds with an interface of odd types (resources, async, streams, wide variants), exported or imported', async () => {
    assert.equal((await runLoadFuzz(harness, witCases, { numRuns: 4, seed: 1 })).numRuns, 4);
  });

  it('reaches past the parser: some inputs are served, and refusals name their reason', () => {
    assert.ok(harness.stats.served > 0, JSON.stringify(harness.stats));
    assert.ok(harness.stats.refusals > 0);
  });
});

// Their own registry: a defect pinned down here may leave a registry broken for what follows.
describe('fuzz regressions', () => {
  let own: LoadFuzzHarness;
  before(async () => {
    own = await openHarness();
  });
  after(async () => {
    await own.close();
  });

  // Regression (found by this fuzz at 57c5553): a component whose first section claims 2^32-1
  // bytes made wasm-tools panic ("capacity overflow") in the toolchain worker's componentWit. The
  // panic leaves jco's wasm-tools instance unusable, so every later transpile in that worker
  // failed with "wasm trap: cannot enter component instance" until the worker idled out (5 s):
  // the next valid module (here the control load after the run) was refused. Since ce3b19c the
  // name check before transpiling refuses a section that runs past the end, so this input no
  // longer reaches wasm-tools; any other panic there would still break the worker the same way.
  it('regression: a section size of 2^32-1 does not stop the next module from loading', async () => {
    const poison: LoadCase = { how: 'load', component: { from: 'header', rest: [0x06, 0xff, 0xff, 0xff, 0xff, 0x0f] }, manifest: null };
    await own.check(poison);
  });

  // Regression (found by this fuzz's file-system inputs; main/ to fix, FAILS until then): a
  // module.toml that is a FIFO hangs loadModule and scanDirectory for good. The registry reads it
  // with readFile, whose open() waits for a writer that never comes, holding one of libuv's four
  // threadpool threads (four such directories stall every asynchronous file operation in the
  // process). plugin.wasm is lstat'ed and refused unless it is a regular file; module.toml is not.
  // Reading a manifest has no timer of its own, so it gets the harness's slack for such work.
  it('regression: a module.toml that is a FIFO is refused, not waited on', async () => {
    const dir = join(own.root, 'fifo-manifest');
    mkdirSync(dir);
    const fifo = join(dir, 'module.toml');
    execFileSync('mkfifo', [fifo]);
    try {
      await assert.rejects(within(own.registry.loadModule(dir), SLACK_MS, 'loadModule of a FIFO module.toml'), (err: unknown) => {
        if (!(err instanceof PluginLoadError)) throw err; // the Unsettled, with its message
        return true;
      });
    } finally {
      // A reader still waiting gets a writer and then end-of-file, so nothing stays blocked;
      // with no reader waiting, the non-blocking open fails (ENXIO) and there is nothing to end.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader
      }
    }
  });
});

const script = fileURLToPath(new URL('./load-fuzz-run.ts', import.meta.url));
const fuzz = (...args: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', script, ...args]);

it('npm run fuzz:plugins takes its run length, seed and family as flags, and refuses a flag it does not know', async () => {
  const { stdout } = await fuzz('--runs', '2', '--seed', '5', '--family', 'manifests');
  assert.match(stdout, /^fuzz:plugins: 2 runs, no failure in [\d.]+ s \(seed 5\)$/m);
  assert.match(stdout, /^loads: 2 \(family manifests\), served \d+/m);
  await assert.rejects(fuzz('--minutes', '3'), (err: { code?: number; stderr?: string }) => err.code === 2 && /usage: npm run fuzz:plugins/.test(err.stderr ?? ''));
  await assert.rejects(fuzz('--family', 'nope'), (err: { code?: number }) => err.code === 2);
});

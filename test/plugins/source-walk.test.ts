/**
 * A plugin folder holding a huge directory (a data folder of tens of thousands of files, dropped
 * by whoever controls the folder): each load and each `serve --watch` look at the folder asks
 * whether its JavaScript is newer than its component (`sourcesNewerThan`), on the gateway's main
 * thread. That walk is bounded (5,000 entries); it used to read each directory whole before
 * counting, so one directory of 60,000 entries cost twelve times one of 5,000 (a million: seconds
 * of a frozen gateway at every look). Now it reads entries one at a time and stops at the bound.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { sourcesNewerThan } from '../../main/plugins/build/index.js';
import { cpuDuringSync } from '../helpers/cpu-meter.js';

let root: string;
const folder = (name: string, files: number): string => {
  const dir = join(root, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  writeFileSync(join(dir, 'plugin.wasm'), '');
  for (let i = 0; i < files; i++) writeFileSync(join(dir, 'data', `f${i}`), '');
  return dir;
};
let small: string;
let huge: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'chatty-source-walk-'));
  small = folder('small', 5_000);
  huge = folder('huge', 60_000);
});
// `rm -rf`: rmSync's recursion overflows the stack on the 2,000-deep chain below.
after(() => execFileSync('rm', ['-rf', root]));

/**
 * The least CPU time of several walks, in ms: CPU time, not wall-clock, so a loaded machine's
 * waits for a core are not counted as the walk's (the walk is all syscalls and CPU, no waits).
 */
const best = (dir: string): number => {
  let least = Infinity;
  for (let i = 0; i < 7; i++) {
    const { result, cpuMs } = cpuDuringSync(() => sourcesNewerThan(dir, join(dir, 'plugin.wasm')));
    assert.deepEqual(result, []);
    least = Math.min(least, cpuMs);
  }
  return least;
};

it("a folder of 60,000 files costs the walk no more than one of 5,000: it stops at its bound", () => {
  best(small); // warm
  const s = best(small);
  const h = best(huge);
  console.log(`# walk, CPU time: 5,000 entries ${s.toFixed(1)} ms, 60,000 entries ${h.toFixed(1)} ms`);
  assert.ok(h < s * 3 + 5, `60,000 entries took ${h.toFixed(1)} ms of CPU against ${s.toFixed(1)} ms for 5,000`);
});

it('still finds the sources newer than the component, in order', () => {
  const dir = join(root, 'js');
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'plugin.wasm'), '');
  const earlier = new Date(Date.now() - 60_000);
  utimesSync(join(dir, 'plugin.wasm'), earlier, earlier);
  for (const name of ['b.js', 'a.js', 'c.mjs', 'd.txt']) writeFileSync(join(dir, 'src', name), '');
  assert.deepEqual(sourcesNewerThan(dir, join(dir, 'plugin.wasm')), ['src/a.js', 'src/b.js', 'src/c.mjs']);
});

it('a chain of folders 2,000 deep, or 5,000 folders side by side, is walked in a few milliseconds: the walk stops at 6 deep and 500 folders', () => {
  const deep = join(root, 'deep');
  let chain = join(deep, 'c');
  mkdirSync(chain, { recursive: true });
  for (let i = 1; i < 2_000; i++) mkdirSync((chain = join(chain, 'a')));
  const wide = join(root, 'wide');
  for (let i = 0; i < 5_000; i++) mkdirSync(join(wide, `d${i}`), { recursive: true });
  for (const dir of [deep, wide]) writeFileSync(join(dir, 'plugin.wasm'), '');
  const deepMs = best(deep);
  const wideMs = best(wide);
  console.log(`# walk, CPU time: a 2,000-deep chain ${deepMs.toFixed(1)} ms, 5,000 folders ${wideMs.toFixed(1)} ms`);
  // Before: 0.65-1.75 s for the chain (each open looks the whole path up again), about 300 ms for the 5,000 folders.
  // CPU time (the walk never waits): 100 ms stays under both costs, however loaded the machine.
  assert.ok(deepMs < 100, `the 2,000-deep chain took ${deepMs.toFixed(1)} ms of CPU`);
  assert.ok(wideMs < 100, `5,000 folders took ${wideMs.toFixed(1)} ms of CPU`);

  // What lies within the bounds is still found: src/lib/util/x.js (4 deep), not a file 8 deep.
  const js = join(root, 'js-deep');
  mkdirSync(join(js, 'src/lib/util'), { recursive: true });
  mkdirSync(join(js, 'a/b/c/d/e/f/g'), { recursive: true });
  writeFileSync(join(js, 'plugin.wasm'), '');
  const earlier = new Date(Date.now() - 60_000);
  utimesSync(join(js, 'plugin.wasm'), earlier, earlier);
  writeFileSync(join(js, 'src/lib/util/x.js'), '');
  writeFileSync(join(js, 'a/b/c/d/e/f/g/y.js'), '');
  assert.deepEqual(sourcesNewerThan(js, join(js, 'plugin.wasm')), ['src/lib/util/x.js']);
});

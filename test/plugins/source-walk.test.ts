/**
 * A plugin folder holding a huge directory (a data folder of tens of thousands of files, dropped
 * by whoever controls the folder): each load and each `serve --watch` look at the folder asks
 * whether its JavaScript is newer than its component (`sourcesNewerThan`), on the gateway's main
 * thread. That walk is bounded (5,000 entries); it used to read each directory whole before
 * counting, so one directory of 60,000 entries cost twelve times one of 5,000 (a million: seconds
 * of a frozen gateway at every look). Now it reads entries one at a time and stops at the bound.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { sourcesNewerThan } from '../../main/plugins/build/index.js';

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
after(() => rmSync(root, { recursive: true, force: true }));

/** The best of several walks, in ms (the machine is shared: the best is the walk's own cost). */
const best = (dir: string): number => {
  let least = Infinity;
  for (let i = 0; i < 7; i++) {
    const started = performance.now();
    assert.deepEqual(sourcesNewerThan(dir, join(dir, 'plugin.wasm')), []);
    least = Math.min(least, performance.now() - started);
  }
  return least;
};

it("a folder of 60,000 files costs the walk no more than one of 5,000: it stops at its bound", () => {
  best(small); // warm
  const s = best(small);
  const h = best(huge);
  console.log(`# walk: 5,000 entries ${s.toFixed(1)} ms, 60,000 entries ${h.toFixed(1)} ms`);
  assert.ok(h < s * 3 + 5, `60,000 entries took ${h.toFixed(1)} ms against ${s.toFixed(1)} ms for 5,000`);
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

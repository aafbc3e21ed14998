/**
 * The per-folder watch kept by path (review r2, F1 and F2). Before, a watch stayed on whatever
 * folder a path held when it was made: after a deploy by swap the new `p/build` was never
 * watched (a rebuild into it unheard), a folder moved out kept the watches below it (40 cycles
 * of a 100-folder tree filled the 4,096 budget while the modules folder was empty, hiding an
 * honest plugin's edits), and folders skipped while the budget was full were never watched once
 * it freed. Now each watch remembers its folder's identity, a dropped folder takes the watches
 * below it, and the folders skipped are watched once room frees.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as tick } from 'node:timers/promises';
import { ModuleRegistry, watchModules } from '../../main/plugins/index.js';
import { MAX_WATCHED_FOLDERS, TreeWatch } from '../../main/plugins/watch/tree-watch.js';
import { TEST_CACHE_DIR, buildFixture } from '../helpers/wasm-fixtures.js';
import { lines, sayingLogger } from './watch-lines.js';

const scratches: string[] = [];
after(() => {
  for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
});
function scratchDir(): string {
  const scratch = mkdtempSync(join(tmpdir(), 'chatty-tree-identity-'));
  scratches.push(scratch);
  return scratch;
}

/** Polls `check` every 20 ms until it holds; fails after `ms` (a hang guard, not a speed check: a loaded machine may be slow). */
async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) assert.fail(`not within ${ms} ms: ${what}`);
    await tick(20);
  }
}

/** A TreeWatch over a fresh modules folder, with what it heard. */
function treeWatch(): { root: string; scratch: string; heard: (string | null)[]; watch: TreeWatch; fulls: () => number } {
  const scratch = scratchDir();
  const root = join(scratch, 'modules');
  mkdirSync(root);
  const heard: (string | null)[] = [];
  let fulls = 0;
  const watch = new TreeWatch(root, { heard: (path) => heard.push(path), failed: (err) => assert.fail(err), full: () => fulls++ });
  return { root, scratch, heard, watch, fulls: () => fulls };
}

/** Writes `file` until the watch hears `path` (a folder just created may not be watched yet). */
async function heardAfterWriting(heard: (string | null)[], file: string, path: string): Promise<void> {
  await until(`${path} heard`, () => {
    writeFileSync(file, String(performance.now()));
    return heard.includes(path);
  });
}

const MANIFEST = '[module]\nname = "p"\nversion = "1.0.0"\ndescription = "p"\nwasm = "build/plugin.wasm"\n\n[protocols]\nmcp = true\n';

describe('the modules folder watched folder by folder', { timeout: 180_000 }, () => {
  it('a plugin deployed by swapping its folder, then rebuilt into build/, is reloaded both times', async () => {
    const scratch = scratchDir();
    const root = join(scratch, 'modules');
    const put = (dir: string, wasm: Uint8Array): void => {
      mkdirSync(join(dir, 'build'), { recursive: true });
      writeFileSync(join(dir, 'module.toml'), MANIFEST);
      writeFileSync(join(dir, 'build', 'plugin.wasm'), wasm);
    };
    const [echo, slow] = [await buildFixture('echo'), await buildFixture('slow')];
    put(join(root, 'p'), echo);
    const said = lines();
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: sayingLogger(said.say) });
    await registry.scanDirectory(root);
    const watcher = watchModules(registry, root, { say: said.say, debounceMs: 50 });
    const changes: string[] = [];
    registry.onChange((c) => changes.push(`${c.name}:${c.change}`));
    try {
      put(join(scratch, 'p-v2'), slow);
      renameSync(join(root, 'p'), join(scratch, 'p-v1'));
      renameSync(join(scratch, 'p-v2'), join(root, 'p'));
      await until('the swap reloaded', () => changes.includes('p:reloaded'));
      changes.length = 0;
      // A rebuild writes into the new build/ (retried: the new folder's watch may still be being made).
      await until('the rebuild into p/build reloaded', () => {
        if (!changes.includes('p:reloaded')) writeFileSync(join(root, 'p', 'build', 'plugin.wasm'), changes.length % 2 === 0 ? echo : slow);
        return changes.includes('p:reloaded');
      }); // before: never
    } finally {
      await watcher.close();
      await registry.close();
    }
  });

  it('a folder moved in and out 40 times leaves no watch behind; a plugin created after is heard', async () => {
    const { root, scratch, heard, watch } = treeWatch();
    try {
      for (let cycle = 0; cycle < 40; cycle++) {
        const tree = join(scratch, `tree${cycle}`);
        for (let i = 0; i < 100; i++) mkdirSync(join(tree, `s${i}`), { recursive: true });
        renameSync(tree, join(root, 'decoy'));
        await until('the tree watched', () => watch.size > 100);
        renameSync(join(root, 'decoy'), join(scratch, `gone${cycle}`));
        await until('the tree dropped', () => watch.size === 1); // before: 101, 201, … (4,095 at the 41st)
      }
      mkdirSync(join(root, 'honest', 'src'), { recursive: true });
      await heardAfterWriting(heard, join(root, 'honest', 'src', 'tool.js'), join('honest', 'src', 'tool.js'));
    } finally {
      watch.close();
    }
  });

  it('a folder left unwatched while the budget was full is watched once room frees, and a second fill is said again', async () => {
    const { root, heard, watch, fulls } = treeWatch();
    try {
      for (let i = 0; i < MAX_WATCHED_FOLDERS; i++) mkdirSync(join(root, 'decoy', `d${i}`), { recursive: true });
      await until('the budget full', () => fulls() === 1 && watch.size === MAX_WATCHED_FOLDERS);
      mkdirSync(join(root, 'honest', 'src'), { recursive: true });
      await until('honest/ heard (and left unwatched)', () => heard.includes('honest'));
      rmSync(join(root, 'decoy'), { recursive: true });
      await heardAfterWriting(heard, join(root, 'honest', 'src', 'tool.js'), join('honest', 'src', 'tool.js')); // before: never
      for (let i = 0; i < MAX_WATCHED_FOLDERS; i++) mkdirSync(join(root, 'decoy2', `d${i}`), { recursive: true });
      await until('the second fill said', () => fulls() === 2);
    } finally {
      watch.close();
    }
  });
});

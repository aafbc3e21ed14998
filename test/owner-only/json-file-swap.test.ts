/**
 * `OwnerOnlyJsonFile` judges and reads one file: the one it opened. Before, the owner-only check
 * and the version stamp stat'ed the path while the read opened it again, so a file swapped in
 * between (a rename over it, in a folder someone else can change) was read unjudged, or a version
 * read was cached under the stamp of the file that replaced it. The swap is timed here by a hook
 * on `node:fs` (the attacker's rename, at the worst moment); everything else is the real disk.
 */
import assert from 'node:assert/strict';
import fs, { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { z } from 'zod';
import { OwnerOnlyJsonFile } from '../../main/owner-only/index.js';
import { freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('chatty-json-file-swap-');
const Shape = z.object({ n: z.number() });
const open = (path: string): OwnerOnlyJsonFile<z.infer<typeof Shape>> =>
  new OwnerOnlyJsonFile(path, { label: 'test file', contents: 'numbers', kind: 'a test file', schema: Shape, refuse: (m) => new Error(m) });

type FsName = 'statSync' | 'readSync' | 'renameSync';
const originals = new Map<FsName, unknown>();
/** Runs `then` once, right after the first call of `fs[name]` that `when` picks (the attacker's moment). */
function once<N extends FsName>(name: N, when: (...args: Parameters<(typeof fs)[N]>) => boolean, then: () => void): void {
  const original = fs[name] as (...args: unknown[]) => unknown;
  originals.set(name, original);
  let fired = false;
  (fs as unknown as Record<string, unknown>)[name] = function hooked(this: unknown, ...args: unknown[]) {
    const result = original.apply(this, args);
    if (!fired && when(...(args as Parameters<(typeof fs)[N]>))) {
      fired = true;
      then();
    }
    return result;
  };
  syncBuiltinESMExports();
}
afterEach(() => {
  for (const [name, original] of originals) (fs as unknown as Record<string, unknown>)[name] = original;
  originals.clear();
  syncBuiltinESMExports();
});

/** A folder of the owner's with `file.json` (`{"n":1}`, 0600) and the file the attacker renames over it. */
function folderWithFile(): { dir: string; path: string; swapIn: (text: string, mode: number) => () => void } {
  const dir = fresh();
  mkdirSync(dir, { mode: 0o700 });
  const path = join(dir, 'file.json');
  writeFileSync(path, '{"n":1}\n', { mode: 0o600 });
  const swapIn = (text: string, mode: number) => () => {
    const planted = join(dir, 'planted.json');
    writeFileSync(planted, text);
    chmodSync(planted, mode);
    renameSync(planted, path);
  };
  return { dir, path, swapIn };
}

test('a file renamed over the path after it was judged owner-only is not read unjudged (others could write it)', () => {
  const { dir, path, swapIn } = folderWithFile();
  // The moment the check looks at the file's folder: the file itself was judged just before.
  once('statSync', (p) => p === dir, swapIn('{"n":666}\n', 0o666));
  let result: unknown;
  try {
    result = open(path).read();
  } catch (err) {
    result = (err as Error).message;
  }
  assert.notDeepEqual(result, { n: 666 }, 'a file others may write was read as owner-only');
});

test('a version replaced just after it was read is read again, not cached under its successor\'s stamp', () => {
  const { path, swapIn } = folderWithFile();
  const file = open(path);
  once('readSync', () => true, swapIn('{"n":2}\n', 0o600));
  assert.deepEqual(file.read(), { n: 1 }, 'what was opened is what is answered');
  assert.deepEqual(file.read(), { n: 2 }, 'the file that replaced it is read: the stamp is of what was read');
});

test('a file renamed over the path just after the writer\'s own rename is read, not taken as what was written', () => {
  const { path, swapIn } = folderWithFile();
  const file = open(path);
  // The moment right after the writer's rename over the path: another save lands there.
  once('renameSync', (_from, to) => to === path, swapIn('{"n":3}\n', 0o600));
  assert.deepEqual(file.update(() => ({ n: 2 })), { n: 2 });
  assert.deepEqual(file.read(), { n: 3 }, 'the file renamed over it is read: the stamp is of the file written');
});

/**
 * What the broker's git keeps of a command's output, when a hook a worker planted writes it one
 * byte per read: it must cost about its bytes, not a buffer per read (~130 bytes a byte). Real git,
 * a real post-checkout hook (children/stderr-dribble-hook.ts), the broker's own `git()`.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { git } from '../../main/broker/runners/git.js';
import { gitRepoOnMain, tempDir } from '../agents/helpers.js';
import { heldAfterGc } from '../fabric/held-after-gc.js';
import { until } from './helpers.js';

const HOOK = fileURLToPath(new URL('./children/stderr-dribble-hook.ts', import.meta.url));
const BYTES = 100_000;

/** Runs `git worktree add` in a fresh repository whose post-checkout hook writes `bytes` to stderr one byte per read; returns what the broker grew by, after a full collection, once the hook has written them (while git still runs). */
async function grownWhileHookWrites(dir: string, name: string, bytes: number): Promise<number> {
  mkdirSync(join(dir, name));
  const repo = gitRepoOnMain(join(dir, name));
  const marker = join(dir, `${name}-written`);
  const release = join(dir, `${name}-release`);
  const hook = join(repo, '.git', 'hooks', 'post-checkout');
  writeFileSync(hook, `#!/bin/sh\nexec "${process.execPath}" --import "${import.meta.resolve('tsx')}" "${HOOK}" ${bytes} "${marker}" "${release}"\n`);
  chmodSync(hook, 0o755);
  const before = heldAfterGc();
  const adding = git(['worktree', 'add', '--quiet', '-b', 'w', join(dir, `${name}-w`), 'main'], repo, { hooks: true });
  // The marker is made after the last write (a few of the last bytes may still be in the pipe).
  await until(() => existsSync(marker), 'the hook wrote its bytes');
  const grown = heldAfterGc() - before;
  writeFileSync(release, '');
  await adding;
  return grown;
}

// Stderr: a hook's stdout goes there too. Git's stdout is a socket a hook cannot open through
// /proc (ENXIO), and git's own output comes in large writes.
test(`a hook that writes ${BYTES} bytes to git's stderr one byte per read: the broker holds about its bytes while git runs`, async () => {
  const dir = tempDir('chatty-git-output-');
  try {
    await grownWhileHookWrites(dir, 'warm-up', 100); // every function on the way compiled, every structure made once
    const grown = await grownWhileHookWrites(dir, 'repo', BYTES);
    // A buffer kept per read: 70 to 130 bytes a byte (7 MB and more for 100,000).
    assert.ok(grown < 1024 * 1024, `the broker grew by ${(grown / 1024).toFixed(0)} KiB while git's stderr held ${BYTES} bytes`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A write raced by a process sharing the workspace ends, when the race wins, in a WorkspaceRefusal
 * that names the path as approved and what was found there (the LLM agent reads it as a tool
 * refusal and goes on; the scripted agent's task fails with it), never in a raw fs error: a raw
 * `ENOENT … realpath` or `EISDIR … open '/proc/self/fd/31/a'` ended the LLM agent's whole task.
 * Real files, a real racing process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { commitWrite } from '../../main/agents/scripted/write-file.js';
import { stopRacer, tempDir, untilRawError } from './helpers.js';

/** Puts something at `<ws>/a` and takes it away again, until killed: a link to nothing, or a folder. */
const RACER = `
import os, sys, shutil
ws, what = sys.argv[1], sys.argv[2]
p = ws + '/a'
sys.stdout.write('go\\n'); sys.stdout.flush()
while True:
    try:
        if what == 'dangling-link': os.symlink('nowhere', p)
        else: os.mkdir(p)
    except OSError: pass
    try:
        if os.path.islink(p): os.unlink(p)
        elif os.path.isdir(p): shutil.rmtree(p, ignore_errors=True)
        else: os.unlink(p)
    except OSError: pass
`;

const cases = [
  // Before: ENOENT: no such file or directory, realpath '<ws>/a' (the realpath after createParents made a).
  { what: 'dangling-link', path: 'a/b/notes.txt', race: 'a link to nothing put at the folder a while it is made' },
  // Before: EISDIR: illegal operation on a directory, open '/proc/self/fd/<n>/a'.
  { what: 'folder', path: 'a', race: 'a folder put at the file a while it is opened' },
  // Before: ENOENT … realpath '<ws>/a', or the O_CREAT open in a removed folder.
  { what: 'folder', path: 'a/notes.txt', race: 'the folder a removed while the file is made in it' },
] as const;

for (const { what, path, race } of cases) {
  test(`a write to ${path} with ${race} is refused naming the path, never a raw error (Linux)`, { timeout: 180_000, skip: process.platform !== 'linux' ? 'the racer' : false }, async () => {
    const home = tempDir('chatty-write-refusals-');
    const ws = join(home, 'ws');
    mkdirSync(ws);
    const racer = spawn('python3', ['-c', RACER, ws, what], { stdio: ['ignore', 'pipe', 'inherit'] });
    let outcome: Awaited<ReturnType<typeof untilRawError>>;
    try {
      await new Promise((resolve) => racer.stdout.once('data', resolve));
      outcome = await untilRawError(2000, () => commitWrite(ws, { path, file: join(ws, path), content: 'written by the agent\n', diffStat: '+1 -0' }));
    } finally {
      await stopRacer(racer);
    }
    const { raw, refusals, tried } = outcome;
    try {
      assert.deepEqual(raw, [], `a raw error after ${tried} tries`);
      assert.ok(refusals.size > 0, 'the race never won: nothing was refused');
      for (const message of refusals) assert.ok(message.startsWith(JSON.stringify(path)), `a refusal not naming the path first: ${message}`);
      assert.deepEqual(readdirSync(home), ['ws'], 'nothing was made beside the workspace');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}

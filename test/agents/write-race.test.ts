/**
 * An approved write lands on the file the person approved, never on another name of another file:
 * a process sharing the workspace (another worker, a worker's background process) that swaps the
 * path between a regular file and a hard link to a file outside, as fast as it can, must never have
 * the write land outside. The check before the write is a path's; the file written is judged by
 * what was opened (fstat of the open descriptor), before anything in it is changed. Real files, a
 * real racing process.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { commitWrite, planWrite } from '../../main/agents/scripted/write-file.js';
import { tempDir } from './helpers.js';

/** Swaps `<ws>/notes.txt` between a regular file and a hard link to `outside`, until killed. */
const SWAPPER = `
const fs = require('node:fs');
const [ws, outside] = process.argv.slice(1);
const file = ws + '/notes.txt', link = ws + '/notes.link', plain = ws + '/notes.plain';
process.stdout.write('go\\n');
for (;;) {
  try { fs.rmSync(link, { force: true }); fs.linkSync(outside, link); fs.renameSync(link, file); } catch {}
  try { fs.writeFileSync(plain, 'plain\\n'); fs.renameSync(plain, file); } catch {}
}`;

test('a write whose file is swapped for a hard link to a file outside the workspace while it is written never changes that file', { timeout: 180_000 }, async () => {
  const home = tempDir('chatty-write-race-');
  const ws = join(home, 'ws');
  mkdirSync(ws);
  const outside = join(home, 'person.txt');
  writeFileSync(outside, 'the person\'s own\n');
  writeFileSync(join(ws, 'notes.txt'), 'plain\n');
  const plan = await planWrite(ws, 'notes.txt', 'written by the agent');
  const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, outside], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve) => swapper.stdout.once('data', resolve));
    let written = 0;
    for (let i = 0; i < 3000 && readFileSync(outside, 'utf8') === 'the person\'s own\n'; i++) {
      await commitWrite(ws, plan).then(() => written++, () => {});
    }
    assert.equal(readFileSync(outside, 'utf8'), 'the person\'s own\n', `the write landed on the file outside (after ${written} writes)`);
    assert.ok(written > 0, 'no write was made at all: the race did not let a plain file be written');
  } finally {
    swapper.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  }
});

// Importing the renderer fixture made a chatty-screenshots-* folder in /tmp each time, left empty
// by every test file that writes no screenshot. It is now made by startApp only (and removed at
// exit when empty): a process that imports the fixture leaves nothing behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.js';

test('importing the renderer fixture leaves no screenshots folder behind', { timeout: 180_000 }, () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', "const m = await import('./test/renderer/app-fixture.ts'); console.log(m.SCREENSHOTS);"], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 180_000 }); // a hang guard: at load 28 the import alone took over 60 s
  assert.equal(run.status, 0, run.stderr);
  const folder = run.stdout.trim();
  assert.match(folder, /chatty-screenshots-/);
  assert.equal(existsSync(folder), false, `${folder} was left behind`);
});

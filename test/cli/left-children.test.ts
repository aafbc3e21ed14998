/**
 * A test that fails or times out before it ends the `chatty-gateway` child it started must not
 * keep its test file running: the child waits on its stdin, its pipes hold the file's process, and
 * `npm test` would never end (a clean-clone CI at load 20 hung so on test/cli/mcp-stdio-cancel).
 * test/helpers/cli.ts kills what is still running once the file's tests are done. The fixture is
 * a test file run by the real `node --test`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { REPO_ROOT, collect, exited } from '../helpers/cli.js';

test('a test file that leaves a spawned bridge reading its stdin still ends, the bridge killed', { timeout: 120_000 }, async () => {
  const env = { ...process.env };
  delete env['NODE_TEST_CONTEXT']; // the inner runner reports as a runner of its own, in TAP
  const runner = spawn(process.execPath, ['--import', 'tsx', '--test', 'test/cli/fixtures/leaves-a-child.ts'], { cwd: REPO_ROOT, env, stdio: 'pipe' });
  runner.stdin.end();
  const [stdout, , status] = await Promise.all([collect(runner.stdout), collect(runner.stderr), exited(runner)]);
  assert.match(stdout, /child \d+ running/, 'the bridge was still running when its test ended');
  assert.match(stdout, /^# pass 1$/m);
  assert.deepEqual(status, { code: 0, signal: null });
});

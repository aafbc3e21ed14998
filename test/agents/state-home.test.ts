/**
 * A test's writes through a workspace make their write key in a state folder of the test run's own
 * (test/helpers/state-home.ts, which the area's helpers import and `npm test` loads with --import),
 * never in the real home's ~/.local/state/chatty. Before, any run of a writing test made
 * ~/.local/state/chatty/write-key in the real home unless XDG_STATE_HOME was set.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));

const inside = (folder: string, path: string): boolean => !relative(folder, path).startsWith('..');

test("a worker's write in a test makes its write key in the run's own state folder, not the real home", { timeout: 180_000 }, async () => {
  const state = process.env.XDG_STATE_HOME;
  assert.ok(state !== undefined && inside(tmpdir(), state), `the test's XDG_STATE_HOME is ${state}`);
  assert.ok(!inside(join(homedir(), '.local'), state));
  const ws = tempDir();
  const script = `
    const { commitWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    await pinWorkspace(${JSON.stringify(ws)});
    await commitWrite(${JSON.stringify(ws)}, { path: 'a.txt', file: ${JSON.stringify(join(ws, 'a.txt'))}, content: 'a', diffStat: '+1 -0' });`;
  // The worker inherits the test's environment, as a runner's worker does.
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'inherit', 'inherit'] });
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
  assert.equal(statSync(join(state, 'chatty', 'write-key')).mode & 0o777, 0o600);
});

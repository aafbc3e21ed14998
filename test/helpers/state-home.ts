/**
 * Imported for its effect: points XDG_STATE_HOME at a folder of this test run's own, so a write
 * through a workspace (which makes this user's write key, `$XDG_STATE_HOME/chatty/write-key`,
 * else `~/.local/state/chatty/write-key`) never touches the real home. `npm test` loads it with
 * `--import` (so the test runner sets it once and every test file's process, and each worker
 * those spawn, inherits the one folder); the helpers of the test folders whose tests write
 * through workspaces import it too, so a single `node --import tsx --test test/x.test.ts` is
 * covered. A folder set by an outer process of the run is kept; any other XDG_STATE_HOME (the
 * user's own) is replaced. The process that made the folder removes it as it exits.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MARK = 'CHATTY_TEST_STATE_HOME';

if (process.env[MARK] === undefined || process.env[MARK] !== process.env.XDG_STATE_HOME) {
  const made = mkdtempSync(join(tmpdir(), 'chatty-test-state-'));
  process.env.XDG_STATE_HOME = made;
  process.env[MARK] = made;
  process.on('exit', () => rmSync(made, { recursive: true, force: true }));
}

export const TEST_STATE_HOME = process.env.XDG_STATE_HOME;

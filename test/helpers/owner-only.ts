/** Shared setup of the owner-only rules' tests and the gateway's access tests, which apply them. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { tempDir } from './gateway.js';

/** A maker of fresh, not yet existing paths (`case-1`, `case-2`, …) in one scratch directory, removed after the file's tests. */
export function freshPaths(prefix: string): () => string {
  const scratch = tempDir(prefix);
  after(() => scratch.remove());
  let n = 0;
  return () => join(scratch.path, `case-${++n}`);
}

/** A socket file that nothing listens on any more: its server was killed before it could unlink it. */
export function deadSocket(path: string): void {
  const script = `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
  const result = spawnSync(process.execPath, ['-e', script]);
  assert.equal(result.signal, 'SIGKILL');
  assert.ok(lstatSync(path).isSocket());
}

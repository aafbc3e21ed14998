/**
 * A symlink planted at `edge.log` or `approvals.log` in the runtime directory: the logs were
 * appended to the link's target (electron-log opens with flag 'a', following links), unlike the
 * token file. Now a log path that is not a regular file is removed before the log is opened (as
 * the token's is), so rows land in a fresh 0600 file of the gateway's own and the target is untouched.
 */
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { unixRequest } from '../helpers/http.js';
import { tempDir } from '../helpers/gateway.js';

test('symlinks at edge.log and approvals.log are replaced by the gateway’s own files; their targets get nothing', async () => {
  const dir = tempDir();
  const runtimeDir = join(dir.path, 'run');
  mkdirSync(runtimeDir, { mode: 0o700 });
  const victim = join(dir.path, 'victim.txt');
  writeFileSync(victim, '');
  symlinkSync(victim, join(runtimeDir, 'edge.log'));
  symlinkSync(victim, join(runtimeDir, 'approvals.log'));
  const gateway = new ProtocolGateway({ list: () => [] }, { runtimeDir });
  try {
    const { socketPath } = await gateway.start();
    assert.equal((await unixRequest(socketPath, { path: '/' })).status, 401);
  } finally {
    await gateway.stop();
  }
  try {
    assert.equal(readFileSync(victim, 'utf8'), '', 'the link’s target is untouched');
    const edge = lstatSync(join(runtimeDir, 'edge.log'));
    assert.ok(edge.isFile(), 'edge.log is a regular file now');
    assert.equal(edge.mode & 0o777, 0o600);
    assert.match(readFileSync(join(runtimeDir, 'edge.log'), 'utf8'), /"status":401/);
    assert.ok(!lstatSync(join(runtimeDir, 'approvals.log'), { throwIfNoEntry: false })?.isSymbolicLink(), 'approvals.log is no longer a link');
  } finally {
    dir.remove();
  }
});

test('a directory at edge.log is refused at start with a message naming it', async () => {
  const dir = tempDir();
  const runtimeDir = join(dir.path, 'run');
  mkdirSync(join(runtimeDir, 'edge.log'), { recursive: true, mode: 0o700 });
  const gateway = new ProtocolGateway({ list: () => [] }, { runtimeDir });
  try {
    await assert.rejects(gateway.start(), { name: 'AccessError', message: new RegExp(`${join(runtimeDir, 'edge.log')} is not a regular file`) });
  } finally {
    await gateway.stop();
    dir.remove();
  }
});

/**
 * The bridge's read of `gateway.token` (at start, and again after a 401): what can be at that path
 * is read bounded and without blocking, and only a launch token is taken from it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readToken } from '../../main/cli/mcp-stdio/locate.js';
import { freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('chatty-bridge-token-');
const TOKEN = 'a'.repeat(64);

/** What `readToken` said: the token, or the message it threw. */
function read(path: string): string {
  try {
    return `token: ${readToken(path)}`;
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
}

test('a fifo at the token path is refused at once, not read (the read held the bridge until someone wrote to it)', () => {
  const path = fresh();
  assert.equal(spawnSync('mkfifo', ['-m', '600', path]).status, 0);
  // In a child: a read blocked on the fifo holds its thread for ever, and nothing in-process can end that.
  const script = `
    import { readToken } from ${JSON.stringify(new URL('../../main/cli/mcp-stdio/locate.ts', import.meta.url).href)};
    try { readToken(${JSON.stringify(path)}); console.log('read'); } catch (err) { console.log('refused:', err.message); }`;
  // A hang guard: the old read blocked for ever; 60 s leaves a loaded machine time to start tsx.
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(child.signal, null, `the read returned (it was killed by ${child.signal}: blocked on the fifo)`);
  assert.match(child.stdout, /refused: the token file .* is not a regular file/, child.stderr);
});

test('a token file far larger than a token is refused by its size, never read', () => {
  const path = fresh();
  writeFileSync(path, TOKEN, { mode: 0o600 });
  truncateSync(path, 1024 * 1024 * 1024); // 1 GiB, sparse
  assert.match(read(path), /^refused: the token file .* is over 4096 bytes/);
});

test('a symbolic link at the token path is refused (serve writes a regular file there, O_NOFOLLOW)', () => {
  const dir = fresh();
  mkdirSync(dir);
  writeFileSync(join(dir, 'elsewhere'), TOKEN, { mode: 0o600 });
  symlinkSync(join(dir, 'elsewhere'), join(dir, 'gateway.token'));
  assert.match(read(join(dir, 'gateway.token')), /^refused: the token file .* is a symbolic link/);
});

test('text that is no launch token (a line break or a control character in it) is refused, not sent as a header', () => {
  const path = fresh();
  writeFileSync(path, `${TOKEN}\r\nx-injected: 1`, { mode: 0o600 });
  assert.match(read(path), /^refused: the token file .* does not hold a launch token/);
  writeFileSync(path, `${TOKEN}\n`, { mode: 0o600 });
  assert.equal(read(path), `token: ${TOKEN}`, 'a trailing newline (an editor) is still taken off');
});

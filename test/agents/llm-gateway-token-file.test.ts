/**
 * The LLM worker's read of gateway.token (readGatewayToken, main/agents/llm/gateway-location.ts)
 * was readFileSync by path: a fifo there held the worker's only thread (and the broker's cancel
 * with it) for ever, a sparse file of 1 GiB was read whole, a link was followed, and a line break
 * was taken into the token. It now reads through the one token reader the bridge and the
 * gateway's stop use (readTokenFile, main/gateway/access/token.ts), with the bridge's refusals.
 * The fifo and the 1 GiB file are read in a child process, so a hang or a huge read cannot take
 * the test runner with it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readGatewayToken } from '../../main/agents/llm/gateway-location.js';

const TOKEN = 'a'.repeat(64);
const MODULE = new URL('../../main/agents/llm/gateway-location.ts', import.meta.url).pathname;
const CWD = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'llm-token-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(dir, `t${n++}`);

function read(tokenPath: string): string {
  try {
    return `token: ${readGatewayToken({ socketPath: join(dir, 'gateway.sock'), tokenPath, explicit: true })}`;
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
}

/** readGatewayToken in a child process (60 s hang guard): what it printed, or how it was killed. */
function readInChild(tokenPath: string): string {
  const script = `
    import { readGatewayToken } from ${JSON.stringify(MODULE)};
    try { console.log('token:', readGatewayToken({ socketPath: '/nonexistent', tokenPath: ${JSON.stringify(tokenPath)}, explicit: true }).length, 'characters'); }
    catch (err) { console.log('refused:', err.message.slice(0, 300)); }`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000, cwd: CWD });
  return child.signal !== null ? `killed by ${child.signal} (the read never returned)` : `${child.stdout}${child.stderr.slice(0, 500)}`;
}

test('a fifo at the token path is refused at once, not waited on', { timeout: 180_000 }, () => {
  const path = fresh();
  assert.equal(spawnSync('mkfifo', ['-m', '600', path]).status, 0);
  assert.match(readInChild(path), /^refused: the gateway's token file \S+ is not a regular file/);
});

test('a token file of 1 GiB is refused by its size, not read whole', { timeout: 180_000 }, () => {
  const path = fresh();
  writeFileSync(path, TOKEN, { mode: 0o600 });
  truncateSync(path, 1024 * 1024 * 1024);
  assert.match(readInChild(path), /^refused: the gateway's token file \S+ is over 4096 bytes/);
});

test('a symbolic link at the token path is refused, as the bridge refuses it', () => {
  const d = fresh();
  mkdirSync(d);
  writeFileSync(join(d, 'elsewhere'), TOKEN, { mode: 0o600 });
  symlinkSync(join(d, 'elsewhere'), join(d, 'gateway.token'));
  assert.match(read(join(d, 'gateway.token')), /^refused: the gateway's token file \S+ is a symbolic link/);
});

test('a line break inside the token is refused, not sent as an Authorization header; a trailing newline is trimmed', () => {
  const path = fresh();
  writeFileSync(path, `${TOKEN}\r\nx-injected: 1`, { mode: 0o600 });
  assert.match(read(path), /^refused: the gateway's token file \S+ does not hold a launch token/);
  writeFileSync(path, `${TOKEN}\n`, { mode: 0o600 });
  assert.equal(read(path), `token: ${TOKEN}`);
  const missing = fresh();
  assert.match(read(missing), /^refused: the gateway's token file \S+ (cannot be read|does not exist)/);
});

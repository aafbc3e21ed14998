/**
 * The gateway's access (main/gateway/access): its runtime directory by the owner-only rules with
 * `gateway.sock` to fit, its launch token, and ProtocolGateway's start and stop on its socket.
 * The owner-only rules themselves are tested in test/owner-only/owner-only.test.ts.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { AccessError, defaultRuntimeDir, ensureRuntimeDir, maxSocketPathBytes, newLaunchToken, tokenMatches, writeTokenFile } from '../../main/gateway/access/index.js';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { deadSocket, freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('chatty-access-');

describe("the gateway's runtime directory", () => {
  test('is the owner-only default, where gateway.sock fits', () => {
    assert.equal(defaultRuntimeDir({ XDG_RUNTIME_DIR: '/run/user/1000' }), '/run/user/1000/chatty-run');
    // 107 bytes with "/chatty-run/gateway.sock" (24): fits on Linux, so it stays; one more and it does not.
    const limit = maxSocketPathBytes();
    const xdg = `/${'x'.repeat(limit - 24 - 1)}`;
    assert.equal(defaultRuntimeDir({ XDG_RUNTIME_DIR: xdg, XDG_CACHE_HOME: '/c' }), `${xdg}/chatty-run`);
    if (process.platform !== 'darwin') assert.equal(defaultRuntimeDir({ XDG_RUNTIME_DIR: `${xdg}x`, XDG_CACHE_HOME: '/c' }), '/c/chatty-run');
  });

  test('is checked by the owner-only rules for gateway.sock', () => {
    const parent = fresh();
    const dir = join(parent, 'd'.repeat(maxSocketPathBytes() - parent.length - 1 - 13 + 1));
    assert.throws(() => ensureRuntimeDir(dir), { name: 'AccessError', message: new RegExp(`the socket path ${join(dir, 'gateway.sock')} is`) });
    const link = fresh();
    symlinkSync(parent, link);
    assert.throws(() => ensureRuntimeDir(link), AccessError);
  });
});

describe('launch token', () => {
  test('is 64 hex characters and new each time', () => {
    const a = newLaunchToken();
    const b = newLaunchToken();
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.notEqual(a, b);
  });

  test('is written raw, fresh, mode 0600, replacing a leftover', () => {
    const path = fresh();
    writeFileSync(path, 'old token\n', { mode: 0o644 });
    const token = newLaunchToken();
    writeTokenFile(path, token);
    assert.equal(readFileSync(path, 'utf8'), token);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  });

  test('a leftover symlink is replaced, never written through', () => {
    const victim = fresh();
    writeFileSync(victim, 'keep me');
    const path = fresh();
    symlinkSync(victim, path);
    writeTokenFile(path, 'a'.repeat(64));
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
    assert.ok(!lstatSync(path).isSymbolicLink());
  });

  test('comparison accepts only the exact token', () => {
    const token = newLaunchToken();
    assert.ok(tokenMatches(token, token));
    assert.ok(!tokenMatches(token.slice(0, 63), token));
    assert.ok(!tokenMatches(`${token}0`, token));
    assert.ok(!tokenMatches(token.toUpperCase(), token));
    assert.ok(!tokenMatches('', token));
  });
});

describe('ProtocolGateway start/stop', () => {
  test('start() refuses a live socket of another gateway and leaves it alone', async () => {
    const dir = fresh();
    const first = new ProtocolGateway({ list: () => [] }).withRuntimeDir(dir);
    const started = await first.start();
    try {
      const second = new ProtocolGateway({ list: () => [] }).withRuntimeDir(dir);
      await assert.rejects(second.start(), /something is listening on it/);
      assert.ok(lstatSync(started.socketPath).isSocket());
      assert.equal(readFileSync(started.tokenPath, 'utf8'), first.token());
    } finally {
      await first.stop();
    }
  });

  test('start() takes over a dead socket of ours', async () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    deadSocket(join(dir, 'gateway.sock'));
    const gateway = new ProtocolGateway({ list: () => [] }).withRuntimeDir(dir);
    const { socketPath } = await gateway.start();
    assert.ok(lstatSync(socketPath).isSocket());
    await gateway.stop();
  });

  test('stop() removes the socket and the token exactly once', async () => {
    const dir = fresh();
    const gateway = new ProtocolGateway({ list: () => [] }).withRuntimeDir(dir);
    const { socketPath, tokenPath } = await gateway.start();
    assert.equal(statSync(tokenPath).mode & 0o777, 0o600);
    assert.equal(readFileSync(tokenPath, 'utf8'), gateway.token());
    await gateway.stop();
    assert.ok(!existsSync(socketPath));
    assert.ok(!existsSync(tokenPath));
    // A file that appears later (say, the next launch's) is not removed by a second stop().
    writeFileSync(tokenPath, 'next launch');
    await gateway.stop();
    assert.equal(readFileSync(tokenPath, 'utf8'), 'next launch');
  });

  test('stop() removes the socket and the token even when a step before fails, and reports that failure', async () => {
    const gateway = new ProtocolGateway({ list: () => [] }).withRuntimeDir(fresh());
    const { socketPath, tokenPath } = await gateway.start();
    // The failure the CLI hit outside a package: writing out the edge log threw on stop.
    gateway.edgeLog.stopWriting = () => Promise.reject(new Error('the edge log could not be written'));
    await assert.rejects(gateway.stop(), { message: 'the edge log could not be written' });
    assert.ok(!existsSync(socketPath));
    assert.ok(!existsSync(tokenPath));
  });

  test('a runtime directory too deep for a socket fails start() with nothing created', async () => {
    const parent = fresh();
    const gateway = new ProtocolGateway({ list: () => [] }).withRuntimeDir(join(parent, 'x'.repeat(120)));
    await assert.rejects(gateway.start(), { name: 'AccessError', message: /a Unix socket path can be at most/ });
    assert.ok(!existsSync(parent));
  });

  test('a refused runtime directory fails start() without creating files', async () => {
    const dir = fresh();
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const gateway = new ProtocolGateway({ list: () => [] }).withRuntimeDir(dir);
    await assert.rejects(gateway.start(), AccessError);
    assert.ok(!existsSync(join(dir, 'gateway.token')));
    assert.ok(!existsSync(join(dir, 'gateway.sock')));
  });
});

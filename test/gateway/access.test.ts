import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  AccessError,
  WINDOWS_UNSUPPORTED,
  assertSocketPathFits,
  clearStaleSocket,
  defaultRuntimeDir,
  ensureRuntimeDir,
  maxSocketPathBytes,
  newLaunchToken,
  refuseWindows,
  socketPathFits,
  tokenMatches,
  writeTokenFile,
} from '../../main/gateway/access/index.js';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { tempDir } from '../helpers/gateway.js';

const scratch = tempDir('chatty-access-');
after(() => scratch.remove());
let n = 0;
const fresh = (): string => join(scratch.path, `case-${++n}`);

/** A socket file that nothing listens on any more: its server was killed before it could unlink it. */
function deadSocket(path: string): void {
  const script = `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`;
  const result = spawnSync(process.execPath, ['-e', script]);
  assert.equal(result.signal, 'SIGKILL');
  assert.ok(lstatSync(path).isSocket());
}

async function liveSocket(path: string): Promise<Server> {
  const server = createServer((c) => c.end());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

describe('runtime directory', () => {
  test('defaults to $XDG_RUNTIME_DIR/chatty-run, else the user cache dir', () => {
    assert.equal(defaultRuntimeDir({ XDG_RUNTIME_DIR: '/run/user/1000' }), '/run/user/1000/chatty-run');
    assert.equal(defaultRuntimeDir({ XDG_CACHE_HOME: '/home/u/.cache' }), '/home/u/.cache/chatty-run');
    assert.match(defaultRuntimeDir({}), /\/chatty-run$/);
  });

  test('is created 0700 with its parents', () => {
    const dir = join(fresh(), 'a', 'b');
    ensureRuntimeDir(dir);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });

  test('an existing private directory is accepted as it is', () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    assert.equal(ensureRuntimeDir(dir), dir);
  });

  test('a symlink is refused, naming the path and the reason', () => {
    const target = fresh();
    mkdirSync(target, { mode: 0o700 });
    const link = fresh();
    symlinkSync(target, link);
    assert.throws(() => ensureRuntimeDir(link), (err: Error) => {
      assert.ok(err instanceof AccessError);
      assert.equal(err.message, `refusing runtime directory ${link}: it is a symlink`);
      return true;
    });
  });

  test('a file is refused as not a directory, and left as it is', () => {
    const file = fresh();
    writeFileSync(file, 'x');
    assert.throws(() => ensureRuntimeDir(file), { name: 'AccessError', message: `refusing runtime directory ${file}: it is not a directory` });
    assert.equal(readFileSync(file, 'utf8'), 'x');
  });

  test('a path under a file is refused: a parent is not a directory', () => {
    const file = fresh();
    writeFileSync(file, 'x');
    const dir = join(file, 'run');
    assert.throws(() => ensureRuntimeDir(dir), { name: 'AccessError', message: `refusing runtime directory ${dir}: a parent of it is not a directory` });
  });

  test('a directory whose socket path is longer than sun_path takes is refused before anything is created', () => {
    const parent = fresh();
    // gateway.sock and the separator make 13 bytes; fill the rest to one byte over the limit.
    const limit = maxSocketPathBytes();
    const dir = join(parent, 'd'.repeat(limit - parent.length - 1 - 13 + 1));
    assert.equal(Buffer.byteLength(join(dir, 'gateway.sock')), limit + 1);
    assert.throws(() => ensureRuntimeDir(dir), {
      name: 'AccessError',
      message: `refusing runtime directory ${dir}: the socket path ${join(dir, 'gateway.sock')} is ${limit + 1} bytes; a Unix socket path can be at most ${limit} bytes on ${process.platform === 'darwin' ? 'macOS' : 'Linux'}: choose a shorter runtime directory`,
    });
    assert.ok(!existsSync(parent), 'not even the parent is created');
    // One byte shorter fits.
    const fits = join(parent, 'd'.repeat(limit - parent.length - 1 - 13));
    assert.equal(ensureRuntimeDir(fits), fits);
  });

  test('sun_path limits: 107 bytes on Linux, 103 on macOS; multi-byte names count in bytes', () => {
    assert.equal(maxSocketPathBytes('linux'), 107);
    assert.equal(maxSocketPathBytes('darwin'), 103);
    assert.ok(socketPathFits(`/${'a'.repeat(106)}`, 'linux'));
    assert.ok(!socketPathFits(`/${'a'.repeat(107)}`, 'linux'));
    assert.ok(!socketPathFits(`/${'é'.repeat(54)}`, 'linux'), '109 bytes in 55 characters');
    assert.throws(() => assertSocketPathFits(`/${'a'.repeat(103)}`, 'darwin'), /at most 103 bytes on macOS/);
  });

  test('the default falls back to /tmp/chatty-run-<uid> when the usual place is too deep for a socket', () => {
    const deep = `/${'x'.repeat(100)}`;
    assert.equal(defaultRuntimeDir({ XDG_RUNTIME_DIR: deep, XDG_CACHE_HOME: '/home/u/.cache' }), '/home/u/.cache/chatty-run');
    if (process.platform !== 'darwin') {
      assert.equal(defaultRuntimeDir({ XDG_RUNTIME_DIR: deep, XDG_CACHE_HOME: deep }), `/tmp/chatty-run-${process.getuid?.()}`);
    }
    assert.ok(socketPathFits(join(defaultRuntimeDir({ XDG_RUNTIME_DIR: deep, XDG_CACHE_HOME: deep }), 'gateway.sock')));
  });

  test('a 0755 directory is refused and left unchanged', () => {
    const dir = fresh();
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    assert.throws(() => ensureRuntimeDir(dir), {
      message: `refusing runtime directory ${dir}: its mode is 0755; group and others must have no access (chmod 700)`,
    });
    assert.equal(statSync(dir).mode & 0o777, 0o755);
  });

  test('any single group or other bit is refused', () => {
    for (const mode of [0o710, 0o701, 0o740, 0o704, 0o720, 0o702]) {
      const dir = fresh();
      mkdirSync(dir);
      chmodSync(dir, mode);
      assert.throws(() => ensureRuntimeDir(dir), AccessError, `mode ${mode.toString(8)}`);
    }
  });

  test("another user's directory is refused", { skip: process.getuid?.() !== 0 && 'needs root to chown' }, () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 4242, 4242);
    assert.throws(() => ensureRuntimeDir(dir), {
      message: `refusing runtime directory ${dir}: it is owned by uid 4242, not by this user (uid ${process.getuid?.()})`,
    });
  });

  test('Windows is refused with a clear message', () => {
    assert.throws(() => refuseWindows('win32'), { message: WINDOWS_UNSUPPORTED });
    assert.match(WINDOWS_UNSUPPORTED, /Unix-only|macOS\/Linux-only/);
    refuseWindows('linux');
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

describe('stale socket', () => {
  test('our own socket that nothing listens on is removed', async () => {
    const path = fresh();
    deadSocket(path);
    await clearStaleSocket(path);
    assert.ok(!existsSync(path));
  });

  test('a live socket is refused and never unlinked', async () => {
    const path = fresh();
    const server = await liveSocket(path);
    try {
      await assert.rejects(clearStaleSocket(path), {
        message: `refusing to bind ${path}: something is listening on it (is another gateway running?)`,
      });
      assert.ok(lstatSync(path).isSocket());
    } finally {
      server.close();
    }
  });

  test('a path that is not a socket is refused and kept', async () => {
    const path = fresh();
    writeFileSync(path, 'data');
    await assert.rejects(clearStaleSocket(path), { message: `refusing to bind ${path}: it exists and is not a socket` });
    assert.equal(readFileSync(path, 'utf8'), 'data');
  });

  test("a socket another user owns is refused and kept", { skip: process.getuid?.() !== 0 && 'needs root to chown' }, async () => {
    const path = fresh();
    deadSocket(path);
    chownSync(path, 4242, 4242);
    await assert.rejects(clearStaleSocket(path), /owned by uid 4242, not by this user/);
    assert.ok(lstatSync(path).isSocket());
  });

  test('a missing path is fine', async () => {
    await clearStaleSocket(fresh());
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

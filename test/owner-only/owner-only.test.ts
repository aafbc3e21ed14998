/**
 * The owner-only rules (main/owner-only): the runtime directory, socket paths that fit, leftover
 * sockets, the platform. Each user names its own socket file; here a stand-in of its length.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, lutimesSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import {
  AccessError,
  WINDOWS_UNSUPPORTED,
  assertSocketPathFits,
  bindOwnSocket,
  clearStaleSocket,
  defaultRuntimeDir,
  ensureRuntimeDir,
  maxSocketPathBytes,
  refuseWindows,
  socketPathFits,
} from '../../main/owner-only/index.js';
import { deadSocket, freshPaths } from '../helpers/owner-only.js';

/** The socket a user of the rules will bind in the directory (as long as `gateway.sock`). */
const SOCKET = 'service.sock';
const ensure = (dir: string): string => ensureRuntimeDir(dir, { socketFile: SOCKET });

const fresh = freshPaths('chatty-owner-only-');

async function liveSocket(path: string): Promise<Server> {
  const server = createServer((c) => c.end());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

describe('runtime directory', () => {
  test('defaults to $XDG_RUNTIME_DIR/chatty-run, else the user cache dir', () => {
    assert.equal(defaultRuntimeDir(SOCKET, { XDG_RUNTIME_DIR: '/run/user/1000' }), '/run/user/1000/chatty-run');
    assert.equal(defaultRuntimeDir(SOCKET, { XDG_CACHE_HOME: '/home/u/.cache' }), '/home/u/.cache/chatty-run');
    assert.match(defaultRuntimeDir(SOCKET, {}), /\/chatty-run$/);
  });

  test('is created 0700 with its parents', () => {
    const dir = join(fresh(), 'a', 'b');
    ensure(dir);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });

  test('an existing private directory is accepted as it is', () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    assert.equal(ensure(dir), dir);
  });

  test('a symlink is refused, naming the path and the reason', () => {
    const target = fresh();
    mkdirSync(target, { mode: 0o700 });
    const link = fresh();
    symlinkSync(target, link);
    assert.throws(() => ensure(link), (err: Error) => {
      assert.ok(err instanceof AccessError);
      assert.equal(err.message, `refusing runtime directory ${link}: it is a symlink`);
      return true;
    });
  });

  test('a file is refused as not a directory, and left as it is', () => {
    const file = fresh();
    writeFileSync(file, 'x');
    assert.throws(() => ensure(file), { name: 'AccessError', message: `refusing runtime directory ${file}: it is not a directory` });
    assert.equal(readFileSync(file, 'utf8'), 'x');
  });

  test('a path under a file is refused: a parent is not a directory', () => {
    const file = fresh();
    writeFileSync(file, 'x');
    const dir = join(file, 'run');
    assert.throws(() => ensure(dir), { name: 'AccessError', message: `refusing runtime directory ${dir}: a parent of it is not a directory` });
  });

  test('a directory whose socket path is longer than sun_path takes is refused before anything is created', () => {
    const parent = fresh();
    // service.sock and the separator make 13 bytes; fill the rest to one byte over the limit.
    const limit = maxSocketPathBytes();
    const dir = join(parent, 'd'.repeat(limit - parent.length - 1 - 13 + 1));
    assert.equal(Buffer.byteLength(join(dir, SOCKET)), limit + 1);
    assert.throws(() => ensure(dir), {
      name: 'AccessError',
      message: `refusing runtime directory ${dir}: the socket path ${join(dir, SOCKET)} is ${limit + 1} bytes; a Unix socket path can be at most ${limit} bytes on ${process.platform === 'darwin' ? 'macOS' : 'Linux'}: choose a shorter runtime directory`,
    });
    assert.ok(!existsSync(parent), 'not even the parent is created');
    // One byte shorter fits.
    const fits = join(parent, 'd'.repeat(limit - parent.length - 1 - 13));
    assert.equal(ensure(fits), fits);
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
    assert.equal(defaultRuntimeDir(SOCKET, { XDG_RUNTIME_DIR: deep, XDG_CACHE_HOME: '/home/u/.cache' }), '/home/u/.cache/chatty-run');
    if (process.platform !== 'darwin') {
      assert.equal(defaultRuntimeDir(SOCKET, { XDG_RUNTIME_DIR: deep, XDG_CACHE_HOME: deep }), `/tmp/chatty-run-${process.getuid?.()}`);
    }
    assert.ok(socketPathFits(join(defaultRuntimeDir(SOCKET, { XDG_RUNTIME_DIR: deep, XDG_CACHE_HOME: deep }), SOCKET)));
  });

  test('a 0755 directory is refused and left unchanged', () => {
    const dir = fresh();
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    assert.throws(() => ensure(dir), {
      message: `refusing runtime directory ${dir}: its mode is 0755; group and others must have no access (chmod 700)`,
    });
    assert.equal(statSync(dir).mode & 0o777, 0o755);
  });

  test('any single group or other bit is refused', () => {
    for (const mode of [0o710, 0o701, 0o740, 0o704, 0o720, 0o702]) {
      const dir = fresh();
      mkdirSync(dir);
      chmodSync(dir, mode);
      assert.throws(() => ensure(dir), AccessError, `mode ${mode.toString(8)}`);
    }
  });

  test("another user's directory is refused", { skip: process.getuid?.() !== 0 && 'needs root to chown' }, () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 4242, 4242);
    assert.throws(() => ensure(dir), {
      message: `refusing runtime directory ${dir}: it is owned by uid 4242, not by this user (uid ${process.getuid?.()})`,
    });
  });

  test('Windows is refused with a clear message', () => {
    assert.throws(() => refuseWindows('win32'), { message: WINDOWS_UNSUPPORTED });
    assert.match(WINDOWS_UNSUPPORTED, /Unix-only|macOS\/Linux-only/);
    refuseWindows('linux');
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

describe('binding under the start lock', () => {
  test('a dangling link at the lock, left by a crash long ago, is taken as a stale lock, not read as released for ever', () => {
    // In a child: before, the lock taker spun synchronously for ever (stat through the link: ENOENT, "released meanwhile").
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    const path = join(dir, SOCKET);
    symlinkSync(join(dir, 'nowhere'), `${path}.lock`);
    const old = new Date(Date.now() - 60_000);
    lutimesSync(`${path}.lock`, old, old);
    const script = `import('${pathToFileURL(join(import.meta.dirname, '../../main/owner-only/index.ts')).href}').then(async (m) => {
      const server = require('node:net').createServer();
      await m.bindOwnSocket(${JSON.stringify(path)}, server);
      server.close();
      console.log('bound');
    })`;
    // A hang guard: the old lock taker spun for ever; 60 s leaves a loaded machine time to start tsx.
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { timeout: 60_000, encoding: 'utf8' });
    assert.equal(child.signal, null, 'the lock taker finished (not killed at the timeout)');
    assert.equal(child.stdout.trim(), 'bound', child.stderr);
    assert.ok(!existsSync(`${path}.lock`) && lstatOrNull(`${path}.lock`) === null, 'the lock is released');
  });

  test('a lock held by another starter is waited for: the second then finds the first’s socket live and is refused', async () => {
    const dir = fresh();
    mkdirSync(dir, { mode: 0o700 });
    const path = join(dir, SOCKET);
    deadSocket(path);
    const servers = [createServer(), createServer()];
    const outcomes = await Promise.allSettled(servers.map((server) => bindOwnSocket(path, server)));
    try {
      assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected']);
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /something is listening on it/);
      assert.ok(servers[0]!.listening && !servers[1]!.listening);
    } finally {
      for (const server of servers) server.close();
    }
  });
});

function lstatOrNull(path: string): ReturnType<typeof lstatSync> | null {
  return lstatSync(path, { throwIfNoEntry: false }) ?? null;
}

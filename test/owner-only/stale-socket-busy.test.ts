/**
 * clearStaleSocket took any connect error for "nothing listens". A live gateway whose thread is
 * stalled long enough to fill its listen backlog answers a probe with EAGAIN, so a second starter
 * unlinked the live socket and bound its own: two gateways, the first unreachable. Only
 * ECONNREFUSED (and ENOENT) mean nothing listens; any other error is refused.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { test } from 'node:test';
import { clearStaleSocket } from '../../main/owner-only/index.js';
import { freshPaths } from '../helpers/owner-only.js';

const fresh = freshPaths('stale-busy');

test('a live socket whose listen backlog is full is refused, not cleared as stale', { timeout: 180_000 }, async () => {
  const path = fresh();
  // A "gateway" that listens (backlog 1), says so, then keeps its thread busy until killed.
  const child = spawn(
    process.execPath,
    ['-e', `require('net').createServer().listen({ path: ${JSON.stringify(path)}, backlog: 1 }, () => { console.log('up'); for (;;); })`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const clients: Socket[] = [];
  try {
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    // Connect until the backlog is full: the kernel answers the next one EAGAIN.
    for (;;) {
      const client = createConnection(path);
      clients.push(client);
      const code = await new Promise<string | undefined>((resolve) => {
        client.once('connect', () => resolve(undefined));
        client.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
      });
      if (code === 'EAGAIN') break;
      assert.equal(code, undefined, 'a connect failed otherwise than with a full backlog');
    }
    await assert.rejects(clearStaleSocket(path), {
      message: `refusing to bind ${path}: something may be listening on it (connecting said EAGAIN); is another gateway running?`,
    });
    assert.ok(lstatSync(path).isSocket(), 'the live socket was unlinked');
  } finally {
    for (const client of clients) client.destroy();
    child.kill();
  }
});

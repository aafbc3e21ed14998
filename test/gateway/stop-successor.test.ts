/**
 * A gateway stopping while another starts in the same runtime directory (a fast restart, or
 * `serve` and the app sharing the default directory): the first removed `gateway.sock` and
 * `gateway.token` by path after draining its logs, by then the successor's, which then failed to
 * start (ENOENT on chmod) or ran with neither file. Now a gateway removes only files that are
 * still its own, right after its server closes.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { unixRequest } from '../helpers/http.js';
import { startMcpGateway } from '../mcp/helpers.js';
import { SseStream } from '../mcp/sse-reader.js';

test('a successor started the moment the first has stopped listening keeps its socket and token', { timeout: 180_000 }, async () => {
  const first = await startMcpGateway(['echo']);
  const second = new ProtocolGateway({ list: () => [] }, { runtimeDir: first.runtimeDir });
  try {
    // The first's open SSE stream is closed by its stop, once it no longer listens: the successor starts then.
    const stream = await SseStream.open(first.socketPath, '/mcp/echo/sse', first.auth);
    await stream.nextEvent();
    const successor = new Promise<unknown>((resolve) => {
      first.gateway.onSseSession((event) => {
        if (event.state === 'closed') resolve(second.start().catch((err: unknown) => err));
      });
    });
    await first.gateway.stop();
    const started = await successor;
    assert.ok(!(started instanceof Error), `the successor failed to start: ${String(started)}`);
    assert.ok(existsSync(first.socketPath), 'the successor’s socket is still there');
    assert.equal(readFileSync(first.tokenPath, 'utf8'), second.token(), 'the token file is the successor’s');
    const res = await unixRequest(first.socketPath, { headers: { authorization: `Bearer ${second.token()}` } });
    assert.equal(res.status, 200);
  } finally {
    await second.stop();
    await first.close();
  }
  assert.ok(!existsSync(first.socketPath) && !existsSync(first.tokenPath), 'the successor’s own stop removes both');
});

test('a stopping gateway leaves a successor’s files that took its inode numbers (forced order: they appear before its removal)', { timeout: 180_000 }, async () => {
  const first = await startMcpGateway(['echo']);
  const successor = createServer();
  try {
    const stream = await SseStream.open(first.socketPath, '/mcp/echo/sse', first.auth);
    await stream.nextEvent();
    // The stream closes once the first no longer listens and before it removes its files: the
    // successor's files are made then, at once. Its token is written over the same inode, as
    // ext4 hands a freed inode number straight to the next file (same device and inode: the
    // identity the first recorded at start).
    first.gateway.onSseSession((event) => {
      if (event.state !== 'closed') return;
      writeFileSync(first.tokenPath, 'successor-token');
      successor.listen(first.socketPath); // binds now (Node unlinked the first's socket at close)
    });
    await first.gateway.stop();
    assert.equal(readFileSync(first.tokenPath, 'utf8'), 'successor-token', 'the successor’s token is kept');
    assert.ok(lstatSync(first.socketPath).isSocket(), 'the successor’s socket is kept');
  } finally {
    successor.close();
    await first.close();
  }
});

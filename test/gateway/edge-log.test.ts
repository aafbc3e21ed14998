import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { EdgeLog, type EdgeRow } from '../../main/gateway/index.js';
import { startGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';

test('one structured row per request, with the reason on a refusal; never the token or a body', async () => {
  const gw = await startGateway();
  const rows: EdgeRow[] = [];
  const unsubscribe = gw.gateway.onEdge((row) => rows.push(row));
  const secretBody = 'the-secret-body-must-not-be-logged';
  try {
    await unixRequest(gw.socketPath, { path: '/', headers: gw.auth });
    await unixRequest(gw.socketPath, { path: '/', headers: { authorization: `Bearer ${'f'.repeat(64)}` } });
    await unixRequest(gw.socketPath, { path: '/', headers: { host: 'evil.com' } });
    await unixRequest(gw.socketPath, { method: 'POST', path: '/nowhere?q=1', headers: gw.auth, body: secretBody });
    unsubscribe();
    await unixRequest(gw.socketPath, { path: '/after-unsubscribe', headers: gw.auth });

    assert.deepEqual(
      rows.map((r) => [r.method, r.path, r.status, r.reason]),
      [
        ['GET', '/', 200, undefined],
        ['GET', '/', 401, 'wrong launch token'],
        ['GET', '/', 403, 'host not loopback: evil.com'],
        ['POST', '/nowhere', 404, undefined],
      ],
    );
    for (const row of rows) {
      assert.ok(!Number.isNaN(Date.parse(row.time)));
      assert.ok(row.durationMs >= 0);
    }
  } finally {
    await gw.gateway.stop();
  }
  // The file transport writes asynchronously; stop() has flushed what was queued.
  const file = readFileSync(join(gw.runtimeDir, 'edge.log'), 'utf8');
  const lines = file.trim().split('\n').map((l) => JSON.parse(l) as EdgeRow);
  assert.deepEqual(lines.map((r) => r.path), ['/', '/', '/', '/nowhere', '/after-unsubscribe']);
  assert.equal(statSync(join(gw.runtimeDir, 'edge.log')).mode & 0o777, 0o600);
  assert.ok(!file.includes(gw.gateway.token()));
  assert.ok(!file.includes(secretBody));
  await gw.close();
});

test('rows are written in batches, every row in order, and stopWriting() drains what is queued', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-edge-'));
  const path = join(dir, 'edge.log');
  const log = new EdgeLog();
  const seen: number[] = [];
  log.subscribe((row) => seen.push(row.status));
  log.writeTo(path);
  // Count the entries electron-log is handed.
  const logger = (log as unknown as { file: { info(text: string): void } }).file;
  const info = logger.info.bind(logger);
  let entries = 0;
  const flushed = new EventEmitter();
  logger.info = (text: string) => {
    entries++;
    info(text);
    flushed.emit('entry');
  };
  const row = (i: number): EdgeRow => ({ time: new Date().toISOString(), method: 'POST', path: `/mcp/m${i}`, status: 200 + (i % 3), durationMs: i / 1000 });
  let n = 0;
  for (let batch = 0; batch < 5; batch++) {
    for (let i = 0; i < 200; i++) log.record(row(n++));
    await once(flushed, 'entry'); // the batch's timer has fired
  }
  for (let i = 0; i < 300; i++) log.record(row(n++)); // still queued when stopWriting() is called
  assert.equal(seen.length, n, 'the event fires for every row at once');
  await log.stopWriting();
  log.record(row(n)); // after stop: the event only
  assert.equal(seen.length, n + 1);
  const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as EdgeRow);
  assert.deepEqual(lines.map((r) => r.path), Array.from({ length: n }, (_, i) => `/mcp/m${i}`));
  assert.deepEqual(lines[7], { ...row(7), time: lines[7]!.time });
  assert.equal(entries, 6, 'one electron-log entry per batch, plus the one stopWriting() flushed');
  rmSync(dir, { recursive: true, force: true });
});

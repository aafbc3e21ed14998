import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { EdgeRow } from '../../main/gateway/index.js';
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

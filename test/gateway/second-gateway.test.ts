/**
 * Two gateways started at once in one runtime directory (`serve` and the app on the default
 * directory, or an app launched twice): both found the socket free, both wrote their token, the
 * one whose bind failed (EADDRINUSE) removed the token file on its way out, and that file then
 * held its own token, having replaced the winner's: the gateway left running had no token file,
 * so every client (mcp-stdio, the SDKs) was locked out until it restarted. Now the token is
 * written only once the socket is bound: the loser never touches the directory's files.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { tempDir } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';

test('two gateways started at once in one runtime directory: the one that runs keeps its token file', { timeout: 20_000 }, async () => {
  const dir = tempDir();
  const runtimeDir = join(dir.path, 'run');
  const gateways = [0, 1].map(() => new ProtocolGateway({ list: () => [] }, { runtimeDir }));
  try {
    const outcomes = await Promise.allSettled(gateways.map((g) => g.start()));
    const running = gateways.filter((_, i) => outcomes[i]!.status === 'fulfilled');
    assert.equal(running.length, 1, `exactly one runs: ${outcomes.map((o) => o.status).join(', ')}`);
    const winner = running[0]!;
    const tokenPath = join(runtimeDir, 'gateway.token');
    assert.ok(existsSync(tokenPath), 'the running gateway’s token file is there');
    assert.equal(readFileSync(tokenPath, 'utf8'), winner.token(), 'the token file is the running gateway’s');
    const res = await unixRequest(join(runtimeDir, 'gateway.sock'), { headers: { authorization: `Bearer ${readFileSync(tokenPath, 'utf8')}` } });
    assert.equal(res.status, 200, 'a client reading the token file is served');
  } finally {
    for (const g of gateways) await g.stop();
    dir.remove();
  }
});

/**
 * Two gateways started at once in one runtime directory (`serve` and the app on the default
 * directory, or an app launched twice): both found the socket free, both wrote their token, the
 * one whose bind failed (EADDRINUSE) removed the token file on its way out, and that file then
 * held its own token, having replaced the winner's: the gateway left running had no token file,
 * so every client (mcp-stdio, the SDKs) was locked out until it restarted. Now the token is
 * written only once the socket is bound: the loser never touches the directory's files.
 *
 * With a crashed launch's socket there, both found it dead and both unlinked it: the later unlink
 * took the earlier one's freshly bound socket, and both ran, one on a socket nobody could reach
 * any more (its plugins and workers held for nothing), the token file whichever wrote last. Now
 * clearing a leftover and binding are done holding `gateway.sock.lock`, one gateway at a time.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ProtocolGateway } from '../../main/gateway/index.js';
import { tempDir } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { deadSocket } from '../helpers/owner-only.js';

for (const leftover of [false, true]) {
test(`two gateways started at once in one runtime directory${leftover ? ', a crashed launch’s socket there' : ''}: one runs and keeps its token file`, { timeout: 180_000 }, async () => {
  const dir = tempDir();
  const runtimeDir = join(dir.path, 'run');
  if (leftover) {
    mkdirSync(runtimeDir, { mode: 0o700 });
    deadSocket(join(runtimeDir, 'gateway.sock'));
  }
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
}

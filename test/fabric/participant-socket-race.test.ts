/**
 * Two shared participant sockets started at once in one runtime directory, a crashed launch's
 * socket there: both found it dead and both unlinked it, the later unlink taking the earlier one's
 * freshly bound socket, and both "ran", one on a socket nobody could reach. Now clearing the
 * leftover and binding are done holding `participant.sock.lock` (`bindOwnSocket`), as the
 * gateway's socket is: the second finds the first's socket live and is refused.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PARTICIPANT_SOCKET_FILE, withParticipantSocket, type ParticipantSocket } from '../../main/fabric/index.js';
import { tempDir } from '../helpers/gateway.js';
import { deadSocket } from '../helpers/owner-only.js';

test('two participant sockets started at once beside a crashed launch’s socket: one binds, the other is refused', { timeout: 180_000 }, async () => {
  const dir = tempDir('fabric-race-');
  const runtimeDir = join(dir.path, 'run');
  mkdirSync(runtimeDir, { mode: 0o700 });
  deadSocket(join(runtimeDir, PARTICIPANT_SOCKET_FILE));
  const outcomes = await Promise.allSettled([0, 1].map(() => withParticipantSocket(runtimeDir, { helloTimeoutMs: 60_000 })));
  const bound = outcomes.filter((o): o is PromiseFulfilledResult<ParticipantSocket> => o.status === 'fulfilled').map((o) => o.value);
  try {
    assert.equal(bound.length, 1, `exactly one binds: ${outcomes.map((o) => o.status).join(', ')}`);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    assert.match(String(refused.reason), /something is listening on it/);
  } finally {
    for (const socket of bound) await socket.close();
    dir.remove();
  }
});

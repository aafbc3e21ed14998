/** The shared participant socket: bound owner-only, refusing every connection. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SHARED_SOCKET_REFUSAL, withParticipantSocket } from '../../main/fabric/index.js';
import { HELLO } from './helpers.js';

const base = mkdtempSync(join(tmpdir(), 'fabric-socket-'));
after(() => rmSync(base, { recursive: true, force: true }));

/** Connects, writes `line` (if any), and collects what comes back until the socket closes. */
async function exchange(path: string, line?: string): Promise<string> {
  const socket = createConnection({ path });
  await once(socket, 'connect');
  if (line !== undefined) socket.write(`${line}\n`);
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  await once(socket, 'close');
  return received;
}

describe('withParticipantSocket', () => {
  it('binds in an owner-only directory and answers a hello with refused, then closes', async () => {
    const dir = join(base, 'run');
    const shared = await withParticipantSocket(dir, { helloTimeoutMs: 60_000 });
    try {
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(statSync(shared.path).mode & 0o777, 0o600);
      const answer = JSON.parse(await exchange(shared.path, HELLO.replace('"id":1', '"id":7')));
      assert.deepEqual(answer, {
        v: 3,
        id: 7,
        error: { kind: 'refused', reason: SHARED_SOCKET_REFUSAL, message: `refused: ${SHARED_SOCKET_REFUSAL}` },
      });
    } finally {
      await shared.close();
    }
    assert.equal(existsSync(shared.path), false);
  });

  it('closes any other first line without a word', async () => {
    const shared = await withParticipantSocket(join(base, 'run2'), { helloTimeoutMs: 60_000 });
    try {
      assert.equal(await exchange(shared.path, '{"v":3,"id":1,"method":"agent.list"}'), '');
      assert.equal(await exchange(shared.path, 'not json'), '');
    } finally {
      await shared.close();
    }
  });

  it('closes a silent connection when the timeout ends', async () => {
    const shared = await withParticipantSocket(join(base, 'run3'), { helloTimeoutMs: 50 });
    try {
      assert.equal(await exchange(shared.path), '');
    } finally {
      await shared.close();
    }
  });
});

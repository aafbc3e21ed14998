/**
 * A long-lived participant's child may leave a background process holding the child's stdout and
 * stderr: once the child has exited the broker lets go of those pipes (as a runner does for a
 * virtual agent's worker), so a stopped gateway lets its process exit (issue 17, item 8).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { backgroundPipes, startBroker } from './helpers.js';

const GATEWAY = fileURLToPath(new URL('./children/participant-gateway-exit.ts', import.meta.url));
const pipes = backgroundPipes('chatty-participant-stdio-');

// The timeout only bounds a hang (the background sleep holds the pipes for 30 s); nothing is timed.
it('a stopped gateway\'s process exits although a long-lived participant\'s background process still holds the participant\'s stdout and stderr', { timeout: 180_000 }, () => pipes.gatewayExits(GATEWAY));

it('a participant that exits without its hello, leaving a background process on its stdout and stderr, fails openParticipant without waiting for that process', { timeout: 180_000 }, async () => {
  const t = startBroker([]);
  try {
    await assert.rejects(
      t.broker.openParticipant('quitter', '/bin/sh', pipes.quitterArgs),
      pipes.failedHello,
    );
    assert.deepEqual(t.broker.listAgents(), []);
  } finally {
    await t.close();
  }
});

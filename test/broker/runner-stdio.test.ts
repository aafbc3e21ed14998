/**
 * A worker's child may leave a background process holding the worker's stdout and stderr: once
 * the worker has exited, its runner lets go of those pipes, so a stopped gateway lets its process
 * exit, and a worker that fails its hello fails its start at once (issue 17, item 8).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { Directory, ParticipantRegistry } from '../../main/fabric/index.js';
import { backgroundPipes } from './helpers.js';

const GATEWAY = fileURLToPath(new URL('./children/runner-gateway-exit.ts', import.meta.url));
const pipes = backgroundPipes('chatty-runner-stdio-');

// The timeout only bounds a hang (the background sleep holds the pipes for 30 s); nothing is timed.
it('a stopped gateway\'s process exits although a worker\'s background process still holds the worker\'s stdout and stderr', { timeout: 180_000 }, () => pipes.gatewayExits(GATEWAY));

it('a worker that exits without its hello, leaving a background process on its stdout and stderr, fails start without waiting for that process', { timeout: 180_000 }, async () => {
  const runner = new LocalRunner({ command: '/bin/sh', args: pipes.quitterArgs });
  await assert.rejects(
    runner.start({ spec: 'quitter', spawnContext: { roster: [] }, connection: { directory: new Directory(), registry: new ParticipantRegistry() } }),
    pipes.failedHello,
  );
});

/**
 * The environment a worker gets from the gateway (workerEnv): what is the gateway's own never
 * reaches a worker, nor a command the worker runs (whose output an LLM agent hands its model).
 * The real scripted worker (`chatty-gateway worker`) started by a real broker; its approved
 * command prints what it sees.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startScripted } from '../agents/helpers.js';

test("the gateway's own credential (the remote runner's token, CHATTY_REMOTE_RUNNER_TOKEN) never reaches a worker or the commands it runs", async () => {
  const before = process.env['CHATTY_REMOTE_RUNNER_TOKEN'];
  process.env['CHATTY_REMOTE_RUNNER_TOKEN'] = 'the-gateway-s-own-secret';
  const scripted = startScripted(['coder'], { approve: () => 'approved' });
  try {
    const result = await scripted.invoke('coder', 'exec echo "token=[${CHATTY_REMOTE_RUNNER_TOKEN-}] home=[${HOME:+set}]"');
    assert.equal(result.success, true, result.error);
    // Everything else of the user's environment still passes (a worker needs its own keys).
    assert.equal(result.response, 'token=[] home=[set]\n[exit code 0]\n');
  } finally {
    await scripted.close();
    if (before === undefined) delete process.env['CHATTY_REMOTE_RUNNER_TOKEN'];
    else process.env['CHATTY_REMOTE_RUNNER_TOKEN'] = before;
  }
});

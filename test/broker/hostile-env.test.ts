/**
 * The environment a worker gets from the gateway (workerEnv): what is the gateway's own never
 * reaches a worker, nor a command the worker runs (whose output an LLM agent hands its model),
 * nor a hook the worker plants for the broker's own git to run. The real scripted worker
 * (`chatty-gateway worker`) started by a real broker; its approved command prints what it sees.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gitRepoOnMain, startScripted, tempDir } from '../agents/helpers.js';
import { worktreeBroker } from './hostile-git-broker.js';

/** Runs `body` with the gateway's CHATTY_REMOTE_RUNNER_TOKEN set to `token`, then puts back what was there. */
async function withGatewayToken<T>(token: string, body: () => Promise<T>): Promise<T> {
  const before = process.env['CHATTY_REMOTE_RUNNER_TOKEN'];
  process.env['CHATTY_REMOTE_RUNNER_TOKEN'] = token;
  try {
    return await body();
  } finally {
    if (before === undefined) delete process.env['CHATTY_REMOTE_RUNNER_TOKEN'];
    else process.env['CHATTY_REMOTE_RUNNER_TOKEN'] = before;
  }
}

test("the gateway's own credential (the remote runner's token, CHATTY_REMOTE_RUNNER_TOKEN) never reaches a worker or the commands it runs", async () => {
  await withGatewayToken('the-gateway-s-own-secret', async () => {
    const scripted = startScripted(['coder'], { approve: () => 'approved' });
    try {
      const result = await scripted.invoke('coder', 'exec echo "token=[${CHATTY_REMOTE_RUNNER_TOKEN-}] home=[${HOME:+set}]"');
      assert.equal(result.success, true, result.error);
      // Everything else of the user's environment still passes (a worker needs its own keys).
      assert.equal(result.response, 'token=[] home=[set]\n[exit code 0]\n');
    } finally {
      await scripted.close();
    }
  });
});

test("a hook a worker plants, run by the broker's own git (a callee's worktree add), never gets the gateway's credential", async () => {
  const home = tempDir('chatty-hostile-env-');
  try {
    const repo = join(home, 'repo');
    mkdirSync(repo);
    gitRepoOnMain(repo);
    const seen = join(home, 'seen-by-the-hook');
    const payload = join(home, 'post-checkout.payload');
    writeFileSync(payload, `#!/bin/sh\necho "token=[\${CHATTY_REMOTE_RUNNER_TOKEN-}] home=[\${HOME:+set}]" > ${seen}\n`, { mode: 0o755 });
    await withGatewayToken('the-gateway-s-own-secret', async () => {
      const { broker, root } = worktreeBroker(repo, ['coder', 'reviewer']);
      try {
        // post-checkout runs on the `git worktree add` the broker runs for the coder's callee.
        const plant = `exec cp ${payload} "$(git rev-parse --git-common-dir)/hooks/post-checkout"`;
        const result = await root.invoke('coder', `${plant}\ninvoke reviewer say reviewed`);
        assert.equal(result.success, true, result.error);
        assert.match(result.response, /reviewed/);
      } finally {
        await broker.stop();
      }
    });
    assert.equal(readFileSync(seen, 'utf8'), 'token=[] home=[set]\n');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

/**
 * A plugin's `llm` (and `billing`) call runs the embedder's provider on the main thread. When
 * the plugin call that asked ended first (cancelled by its client, past its time limit, its module
 * unloaded or its grant revoked), the engine was stopped but the provider was never told: a
 * completion (an HTTP request to a model, tokens spent) ran on to its end for an answer nobody
 * reads. Now the provider's request carries a signal aborted when the engine that asked ends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PluginCallError, type LlmRequest } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

describe("a provider serving a plugin's host call", () => {
  let fx: LoadedFixtures;
  /** Each completion asked for, and what settles it. */
  const asked: { request: LlmRequest; settled: Promise<void> }[] = [];
  let onAsk: (() => void) | undefined;
  const nextAsk = (): Promise<LlmRequest> => {
    const seen = asked.length;
    return new Promise((resolve) => {
      onAsk = () => {
        if (asked.length > seen) resolve(asked[seen]!.request);
      };
    });
  };

  before(async () => {
    fx = await loadFixtures(
      [
        { name: 'asker', kind: 'echo' },
        { name: 'gone', kind: 'echo' },
        { name: 'slow', kind: 'echo', extra: '[resources]\nmax_execution_ms = 400\n' },
      ],
      {
        providers: {
          llm: {
            // Never answers by itself: it ends when it is told nobody waits (or never).
            complete(request) {
              const settled = new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve(), { once: true }));
              asked.push({ request, settled });
              onAsk?.();
              return settled.then(() => Promise.reject(new Error('aborted')));
            },
          },
        },
        grant: () => ['logging', 'llm'],
      },
    );
    assert.deepEqual(fx.report.failed, []);
  });
  after(() => fx.close());

  const isKind = (kind: string) => (err: unknown) => err instanceof PluginCallError && err.kind === kind;

  it('is told when the call that asked is cancelled', async () => {
    const abort = new AbortController();
    const asking = nextAsk();
    const call = fx.registry.get('asker')!.invokeTool({ name: 'llm', argumentsJson: 'm', callId: 'c1' }, { signal: abort.signal });
    const request = await asking;
    assert.equal(request.signal?.aborted, false, 'not aborted while the call waits for it');
    abort.abort();
    await assert.rejects(call, isKind('cancelled'));
    assert.equal(request.signal?.aborted, true, 'the provider was not told the call is over');
  });

  it('is told when the module is unloaded', async () => {
    const asking = nextAsk();
    const call = fx.registry.get('gone')!.invokeTool({ name: 'llm', argumentsJson: 'm', callId: 'c2' });
    const request = await asking;
    await fx.registry.unload('gone');
    await assert.rejects(call, isKind('unloaded'));
    assert.equal(request.signal?.aborted, true, 'the provider was not told the module is gone');
  });

  it('is told when the call runs past its limit', async () => {
    const asking = nextAsk();
    const call = fx.registry.get('slow')!.invokeTool({ name: 'llm', argumentsJson: 'm', callId: 'c3' });
    const request = await asking;
    await assert.rejects(call, isKind('timeout'));
    assert.equal(request.signal?.aborted, true, 'the provider was not told the call timed out');
  });
});

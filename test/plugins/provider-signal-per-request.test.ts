/**
 * Each provider request gets a signal of its own, aborted from its engine's: the engine's lives as
 * long as the engine (the process's life with engineIdleMs 0, or a module kept busy), and a
 * provider listening the usual way (`addEventListener('abort', …, { once: true })`) left one
 * listener per finished completion on it, each holding its request's messages: a guest calling
 * llm.complete in a loop grew the main process without bound.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { after, before, it } from 'node:test';
import type { LlmRequest } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

let fx: LoadedFixtures;
const requests: LlmRequest[] = [];
before(async () => {
  fx = await loadFixtures([{ name: 'asker', kind: 'echo' }], {
    engineIdleMs: 0,
    providers: {
      llm: {
        complete(request) {
          requests.push(request);
          // The usual way to hear of an abort; it never fires for a completion that finished.
          request.signal.addEventListener('abort', () => void request.messages.length, { once: true });
          return { content: 'ok' };
        },
      },
    },
    grant: () => ['logging', 'llm'],
  });
  assert.deepEqual(fx.report.failed, []);
});
after(() => fx.close());

it("listeners a provider left on finished requests do not pile up on the engine's signal", { timeout: 120_000 }, async () => {
  const asker = fx.registry.get('asker')!;
  for (let i = 0; i < 50; i++) {
    const outcome = await asker.invokeTool({ name: 'llm', argumentsJson: 'x'.repeat(1000), callId: `c${i}` });
    assert.equal(outcome.ok, true);
  }
  const held = getEventListeners(requests.at(-1)!.signal, 'abort').length;
  const distinct = new Set(requests.map((r) => r.signal)).size;
  assert.equal(distinct, requests.length, `${distinct} distinct signal(s) for ${requests.length} requests`);
  assert.ok(held <= 1, `${held} abort listeners on the last finished request's signal`);
});

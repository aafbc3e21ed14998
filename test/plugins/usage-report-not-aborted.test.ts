/**
 * A usage report is the ledger's record of tokens already spent, not an answer anyone waits for:
 * billing.reportUsage gets no abort signal, so a call cancelled (or timed out) while its guest
 * reports usage still has it recorded. It was handed the call's signal, and a provider that
 * stopped there, as the docs asked, never charged what the completion cost.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { PluginCallError } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

let fx: LoadedFixtures;
const recorded: bigint[] = [];
let reporting: (() => void) | undefined;
let reported: (() => void) | undefined;
let cancelled: Promise<void> | undefined;
before(async () => {
  fx = await loadFixtures([{ name: 'metered', kind: 'echo' }], {
    providers: {
      billing: {
        acquireSession: () => ({ token: 't', balanceTokens: 100n, reservedTokens: 0n, pricingModel: 'p' }),
        // A provider that stops where a signal says nobody waits (as it would for a completion).
        async reportUsage(request) {
          reporting?.();
          await cancelled; // the call is cancelled while the report is in the ledger's hands
          const signal = (request as { signal?: AbortSignal }).signal;
          if (!signal?.aborted) recorded.push(request.inputTokens + request.outputTokens);
          reported?.();
        },
      },
    },
    grant: () => ['logging', 'billing'],
  });
  assert.deepEqual(fx.report.failed, []);
});
after(() => fx.close());

it('a usage report is not aborted when the call that made it is cancelled', { timeout: 120_000 }, async () => {
  const abort = new AbortController();
  const inReport = new Promise<void>((resolve) => (reporting = resolve));
  const reportEnded = new Promise<void>((resolve) => (reported = resolve));
  let cancel!: () => void;
  cancelled = new Promise<void>((resolve) => (cancel = resolve));
  const call = fx.registry.get('metered')!.invokeTool({ name: 'usage', argumentsJson: '', callId: 'u1' }, { signal: abort.signal });
  await inReport;
  abort.abort();
  await assert.rejects(call, (err: unknown) => err instanceof PluginCallError && err.kind === 'cancelled');
  cancel();
  await reportEnded;
  assert.deepEqual(recorded, [7n], 'the 3 + 4 tokens the guest reported were never recorded: its report was told to stop');
});

/**
 * A step a hostile worker names, read by the terminal's live status row (`serve` on a terminal:
 * ProgressPrinter with `status`), which takes the delegation chain apart from the step's text
 * (`<callee>: <step>`, as a scripted agent relays its callees' steps). The real scripted worker
 * sends the step (`step <name>`), a real broker relays it, the printer reads it on the gateway's
 * main thread.
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'node:test';
import { ProgressPrinter } from '../../main/cli/terminal-root/progress.js';
import { startScripted } from '../agents/helpers.js';

test("a step that names a node 40,000 times over never stalls the gateway's main thread for a second in the status row", async () => {
  const scripted = startScripted(['coder']);
  const shown: { chain: readonly string[]; step: string }[] = [];
  const printer = new ProgressPrinter('coder', { status: (chain, step) => shown.push({ chain, step }) });
  try {
    const stalls = monitorEventLoopDelay({ resolution: 20 });
    stalls.enable();
    const result = await scripted.root.invoke('coder', `step ${'a-0: '.repeat(40_000)}done`, { onProgress: printer.event });
    stalls.disable();
    assert.equal(result.success, true, result.error);
    const last = shown.at(-1)!;
    assert.equal(last.step, 'done');
    assert.equal(last.chain[0], 'coder-0');
    const worstMs = stalls.max / 1e6;
    assert.ok(worstMs < 1_000, `the main thread stalled for ${Math.round(worstMs)} ms on one step`);
  } finally {
    await scripted.close();
  }
});

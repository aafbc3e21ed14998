/**
 * A step a hostile worker names, read by the terminal's live status row (`serve` on a terminal:
 * ProgressPrinter with `status`), which takes the delegation chain apart from the step's text
 * (`<callee>: <step>`, as a scripted agent relays its callees' steps). The real scripted worker
 * sends the step (`step <name>`), a real broker relays it, the printer reads it on the gateway's
 * main thread.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProgressPrinter } from '../../main/cli/terminal-root/progress.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { startScripted } from '../agents/helpers.js';

test("a step that names a node 40,000 times over costs the gateway's process under a second of CPU more than a plain one in the status row, so never stalls its main thread longer", async () => {
  const scripted = startScripted(['coder']);
  const shown: { chain: readonly string[]; step: string }[] = [];
  const printer = new ProgressPrinter('coder', { status: (chain, step) => shown.push({ chain, step }) });
  try {
    // The same call with a plain step pays the rest (the worker's spawn, its frames): not what is measured.
    const plain = await cpuDuring(() => scripted.root.invoke('coder', 'step done', { onProgress: printer.event }));
    const hostile = await cpuDuring(() => scripted.root.invoke('coder', `step ${'a-0: '.repeat(40_000)}done`, { onProgress: printer.event }));
    assert.equal(plain.result.success, true, plain.result.error);
    assert.equal(hostile.result.success, true, hostile.result.error);
    const last = shown.at(-1)!;
    assert.equal(last.step, 'done');
    assert.equal(last.chain[0], 'coder-1');
    const extraMs = hostile.cpuMs - plain.cpuMs;
    assert.ok(extraMs < 1_000, `one step cost the gateway's process ${Math.round(extraMs)} ms of CPU more than a plain one (${Math.round(hostile.cpuMs)} against ${Math.round(plain.cpuMs)} ms)`);
  } finally {
    await scripted.close();
  }
});

/**
 * A guest's log line is made one visible line in its worker (`oneLogLine`): the main thread
 * admits it by the module's rate and hands it to the logger as it is. It escaped it again
 * (the registry's logger is `visibleLines`), and the emoji scan that decides whether a selector
 * or a joiner is part of a picture costs V8 1-6 µs a position: 12 lines of U+1F600 U+2764 U+FE0F
 * (~780 KB, within one call's budget and the module's burst) held the main thread ~0.7-1 s, every
 * client's request waiting, for text its worker had already judged. Main-thread time is measured
 * as the event loop's active time while the calls run (the worker's own escaping is not in it).
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { it } from 'node:test';
import { MAX_LOG_BYTES } from '../../main/plugins/limits.js';
import { oneLogLine } from '../../main/plugins/worker/log-line.js';
import { loadFixtures } from '../helpers/wasm-fixtures.js';

it("a guest's lines cost the main thread their admission, not a second escaping", { timeout: 120_000 }, async () => {
  const fx = await loadFixtures([{ name: 'pictures', kind: 'wasi' }, { name: 'letters', kind: 'wasi' }]);
  try {
    const line = '\u{1F600}\u2764\ufe0f'.repeat(6500); // 65,000 bytes: under a line's cap
    const hidden = 'a\u200bb\u{1F600}\u2764\ufe0f\u202e'.repeat(10); // what is hidden is still escaped, once
    // Each module has its own rate: 12 lines of 64 KiB each are within its burst.
    const call = async (module: string, text: string, n: number): Promise<void> => {
      const handle = fx.registry.get(module)!;
      for (let i = 0; i < n; i++) assert.equal((await handle.invokeTool({ name: 'log', argumentsJson: text, callId: `c${performance.now()}` })).ok, true);
    };
    const guestLines = (module: string): string[] => fx.logs.filter((l) => l.fields?.['module'] === module && l.fields?.['source'] === 'guest').map((l) => l.message);
    for (const module of ['pictures', 'letters']) await call(module, hidden, 1); // the engines started, the code warm
    assert.deepEqual(guestLines('pictures'), [oneLogLine(hidden, MAX_LOG_BYTES)]);
    assert.match(guestLines('pictures')[0]!, /^a\\u200bb\u{1F600}\u2764\ufe0f\\u202ea\\u200b/u);
    // The main thread's time for 12 lines of plain letters (nothing to escape on either thread),
    // then for 12 of U+1F600 U+2764 U+FE0F: what a line costs it beside the call around it.
    const busy = async (module: string, text: string): Promise<number> => {
      fx.logs.length = 0;
      const before = performance.eventLoopUtilization();
      await call(module, text, 12);
      const { active } = performance.eventLoopUtilization(before);
      assert.equal(guestLines(module).length, 12, 'every line within the burst is logged');
      const made = oneLogLine(text, MAX_LOG_BYTES);
      assert.ok(guestLines(module).every((l) => l === made), 'logged as its worker made it');
      return active;
    };
    const letters = await busy('letters', 'a'.repeat(65_000));
    const pictures = await busy('pictures', line);
    assert.ok(pictures < 3 * letters + 150, `the main thread was busy ${pictures.toFixed(0)} ms for 12 lines of 64 KiB of pictures, ${letters.toFixed(0)} ms for 12 of letters`);
  } finally {
    await fx.close();
  }
});

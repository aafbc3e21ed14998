/**
 * The log budget counts lines, not only bytes: each line is a record in the gateway's log
 * (`chatty-gateway plugins [name] info: …` and a newline) whatever its message's length, so a
 * guest writing one-byte or empty lines put 40 times its budget into the log (150,000 lines,
 * 6 MB in 7 s where 2 MB were allowed), and an empty bucket admitted every empty line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { LogRate } from '../../main/plugins/handle/log-rate.js';
import { MAX_LOG_BYTES_PER_SECOND } from '../../main/plugins/limits.js';
import { monotonicMs } from '../../main/plugins/worker/call-channel.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

describe('a log line costs more than its bytes', () => {
  it('an empty bucket admits no empty line (a fake clock)', () => {
    const now = 0;
    const rate = new LogRate(() => now, 10, 1000);
    while (rate.admit(1).pass);
    let admitted = 0;
    for (let i = 0; i < 10_000; i++) if (rate.admit(0).pass) admitted++;
    assert.equal(admitted, 0, `${admitted} empty lines admitted by an empty bucket in the same instant`);
  });

  describe('a guest writing one-byte lines to stdout', () => {
    let fx: LoadedFixtures;
    let wasi: ModuleHandle;
    before(async () => {
      fx = await loadFixtures([{ name: 'talker', kind: 'wasi' }]);
      assert.deepEqual(fx.report.failed, []);
      wasi = fx.registry.get('talker')!;
    });
    after(() => fx.close());

    it('puts at most the budget into the log, counted as the log writes it', { timeout: 170_000 }, async () => {
      const from = fx.logs.length;
      const started = monotonicMs();
      const lines = 'a\n'.repeat(1000); // the per-call line cap
      for (let i = 0; i < 150; i++) {
        const outcome = await wasi.invokeTool({ name: 'stdout', argumentsJson: lines, callId: `s-${i}` });
        assert.equal(outcome.ok, true);
      }
      const seconds = (monotonicMs() - started) / 1000;
      const records = fx.logs.slice(from).filter((l) => l.fields?.['module'] === 'talker' && l.fields?.['source'] === 'stdout');
      // What stderrLogger (the default logger) writes for each of them.
      const written = records.reduce((n, l) => n + Buffer.byteLength(`chatty-gateway plugins [talker] ${l.level}: ${l.message}\n`), 0);
      const allowed = new LogRate(monotonicMs).burstBytes + Math.ceil(seconds) * MAX_LOG_BYTES_PER_SECOND;
      assert.ok(written <= allowed, `${records.length} lines, ${written} bytes written to the log in ${seconds.toFixed(1)} s (the budget allows ${allowed})`);
    });
  });
});

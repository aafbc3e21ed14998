/**
 * A guest's log lines are held to a budget per call in its worker; a client calling in a loop
 * picks how many calls there are, so each call brought another 1 MiB into the gateway's log
 * (12 calls back to back: 12 MiB in a second or two). Now a module's lines add up to at most
 * `MAX_LOG_BYTES_PER_SECOND` a second, across its calls and its engine starts, and the drop is said
 * once a second.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { LogRate } from '../../main/plugins/handle/log-rate.js';
import { MAX_LOG_BYTES_PER_SECOND } from '../../main/plugins/limits.js';
import { monotonicMs } from '../../main/plugins/worker/call-channel.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

describe("a module's log lines per second", () => {
  let fx: LoadedFixtures;
  let hostile: ModuleHandle;
  before(async () => {
    fx = await loadFixtures([{ name: 'hostile', kind: 'hostile' }]);
    assert.deepEqual(fx.report.failed, []);
    hostile = fx.registry.get('hostile')!;
  });
  after(() => fx.close());

  it('a client calling a logging tool in a loop gets at most the per-second budget into the log, and one warning a second', async () => {
    const from = fx.logs.length;
    const started = monotonicMs();
    for (let i = 0; i < 12; i++) {
      // 16 lines of 64 KiB: one call's whole 1 MiB budget.
      const outcome = await hostile.invokeTool({ name: 'log-flood', argumentsJson: '16', callId: `flood-${i}` });
      assert.equal(outcome.ok, true);
    }
    const seconds = (monotonicMs() - started) / 1000;
    const lines = fx.logs.slice(from).filter((l) => l.fields?.['module'] === 'hostile');
    const guestBytes = lines.filter((l) => l.fields?.['source'] === 'guest').reduce((n, l) => n + Buffer.byteLength(l.message), 0);
    // One call's whole budget (its bytes, its lines' cost, and a line) at once, then the per-second budget.
    const allowed = new LogRate(monotonicMs).burstBytes + Math.ceil(seconds) * MAX_LOG_BYTES_PER_SECOND;
    assert.ok(guestBytes <= allowed, `${guestBytes} bytes of guest log lines in ${seconds.toFixed(1)} s (at most ${allowed})`);
    const notices = lines.filter((l) => /over the module's budget/.test(l.message));
    assert.ok(notices.length >= 1, 'the drop is said');
    assert.ok(notices.length <= Math.ceil(seconds), `${notices.length} drop warnings in ${seconds.toFixed(1)} s`);
    assert.ok(notices.every((l) => l.level === 'warn'));
  });

  it('a burst, then so much a second; drops said at most once a second, with their count (a fake clock)', () => {
    let now = 0;
    const rate = new LogRate(() => now, 10, 100, 0); // bytes alone here: the line cost has its own test (log-rate-lines)
    assert.deepEqual(rate.admit(60), { pass: true });
    assert.deepEqual(rate.admit(40), { pass: true });
    const first = rate.admit(1);
    assert.equal(first.pass, false);
    assert.match((first as { notice: string }).notice, /^dropped 1 log line\(s\)/);
    assert.deepEqual(rate.admit(1), { pass: false });
    now = 500; // 5 bytes back
    assert.deepEqual(rate.admit(5), { pass: true });
    assert.deepEqual(rate.admit(1), { pass: false });
    now = 1000; // 5 more; and a second since the last notice
    assert.deepEqual(rate.admit(5), { pass: true });
    const second = rate.admit(1);
    assert.match((second as { notice: string }).notice, /^dropped 3 log line\(s\)/);
    now = 100_000; // refilled to the burst, never past it
    assert.deepEqual(rate.admit(100), { pass: true });
    assert.equal(rate.admit(1).pass, false);
  });

  it("a dropped line of requests sent names their hosts in the notice, and drops not said yet are said once its second has passed (a fake clock)", () => {
    let now = 0;
    const rate = new LogRate(() => now, 10, 100, 0);
    assert.deepEqual(rate.admit(100), { pass: true });
    assert.equal(rate.noticeDueInMs(), undefined, 'nothing dropped, nothing to say');
    assert.match((rate.admit(1, ['a.example:443']) as { notice: string }).notice, /^dropped 1 log line\(s\) .*; among them requests sent to a\.example:443; said at most once a second$/);
    assert.deepEqual(rate.admit(1, ['b.example:443']), { pass: false }); // within the second: withheld
    assert.deepEqual(rate.admit(1), { pass: false });
    assert.equal(rate.pendingNotice(), undefined);
    assert.equal(rate.noticeDueInMs(), 1000);
    now = 1000;
    assert.match(rate.pendingNotice()!, /^dropped 2 log line\(s\) .*; among them requests sent to b\.example:443; said at most once a second$/);
    assert.equal(rate.noticeDueInMs(), undefined, 'said once');
    now = 2000;
    assert.ok((rate.admit(1000) as { notice?: string }).notice, 'a second since the last: said at once');
    for (let i = 0; i < 12; i++) rate.admit(1000, [`h${i % 10}.example:443`]); // ten hosts, two of them twice
    now = 3000;
    assert.match(rate.pendingNotice() ?? '', /^dropped 12 log line\(s\) .*; among them requests sent to h0\.example:443, h1\.example:443, .*h7\.example:443, and 2 to other hosts; said/);
  });
});

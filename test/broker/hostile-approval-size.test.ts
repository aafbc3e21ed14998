/**
 * What one hostile `human.approve` can cost the gateway's main thread. The broker reads a
 * worker's command synchronously (danger tags, simple commands, proposals: main/broker/approvals)
 * before anyone is asked; the wire lets `command_or_path` be as long as a frame (33 MiB). Real
 * worker (children/agent.ts) on a real socketpair; the main thread's stalls measured while the
 * approval is handled.
 */
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAX_APPROVAL_TEXT_CHARS, type AuditRow } from '../../main/broker/approvals/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

test("a worker's approval request with a 350 KB command line never stalls the gateway's main thread for a second", async () => {
  const t = startBroker(['asker']);
  const seen: number[] = [];
  t.root.onApproval((request) => {
    seen.push(request.command_or_path.length);
    return 'denied';
  });
  try {
    const command = 'env -S '.repeat(50_000); // 350,000 characters of one program's options
    const stalls = monitorEventLoopDelay({ resolution: 20 });
    stalls.enable();
    const result = await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: command } }));
    stalls.disable();
    assert.ok(result.response.includes('denied'), result.response);
    const worstMs = stalls.max / 1e6;
    assert.ok(worstMs < 1_000, `the main thread stalled for ${Math.round(worstMs)} ms while one approval request was read`);
  } finally {
    await t.close();
  }
});

test('an approval past MAX_APPROVAL_TEXT_CHARS is refused unread and unasked (no rule, no handler); its audit row keeps the size, not the text; one at the limit is asked', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'approval-size-'));
  const t = startBroker(['asker']);
  const seen: string[] = [];
  t.root.onApproval((request) => {
    seen.push(request.command_or_path);
    return 'approved';
  });
  const rows: AuditRow[] = [];
  t.broker.human.audit.subscribe((row) => rows.push(row));
  t.broker.human.audit.writeTo(join(dir, 'approvals.log'));
  // An allow rule that would cover the long one: it is not even read.
  t.broker.human.rules.add({ effect: 'allow', kind: 'exec', agent: 'asker', match: { exact: 'x'.repeat(MAX_APPROVAL_TEXT_CHARS + 1) } });
  try {
    const atLimit = `echo ${'a'.repeat(MAX_APPROVAL_TEXT_CHARS - 5)}`;
    const tooLong = `echo ${'a'.repeat(MAX_APPROVAL_TEXT_CHARS - 4)}`;
    const ruled = 'x'.repeat(MAX_APPROVAL_TEXT_CHARS + 1);
    const longStat = { approve: { kind: 'write', command_or_path: 'notes.txt', diff_stat: '+'.repeat(MAX_APPROVAL_TEXT_CHARS + 1) } };
    const result = await t.root.invoke(
      'asker',
      plan({ seq: [{ approve: { kind: 'exec', command_or_path: atLimit } }, { approve: { kind: 'exec', command_or_path: tooLong } }, { approve: { kind: 'exec', command_or_path: ruled } }, longStat] }),
    );
    assert.deepEqual(splitJson(result.response), [['approved'], ['denied'], ['denied'], ['denied']]);
    assert.deepEqual(seen, [atLimit], 'only the one at the limit reached the handler (the terminal prompt, the popover)');
    assert.deepEqual(
      rows.map((row) => [row.verdict, row.by, row.command_or_path.length, row.size]),
      [
        ['approved', 'human', MAX_APPROVAL_TEXT_CHARS, undefined],
        ['denied', 'too-long', 0, { command_or_path: MAX_APPROVAL_TEXT_CHARS + 1 }],
        ['denied', 'too-long', 0, { command_or_path: MAX_APPROVAL_TEXT_CHARS + 1 }],
        ['denied', 'too-long', 0, { command_or_path: 9, diff_stat: MAX_APPROVAL_TEXT_CHARS + 1 }],
      ],
    );
    const file = readFileSync(join(dir, 'approvals.log'), 'utf8').trimEnd().split('\n');
    assert.equal(file.length, 4);
    for (const line of file.slice(1)) assert.ok(line.length < 400, `a refused row is short: ${line.length} characters`);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Asks `approve` of a worker, the root denying: the main thread never stalls for `limitMs` while it is read. */
async function readWithin(t: ReturnType<typeof startBroker>, approve: { kind: string; command_or_path: string }, limitMs: number): Promise<void> {
  const stalls = monitorEventLoopDelay({ resolution: 20 });
  stalls.enable();
  const result = await t.root.invoke('asker', plan({ approve }));
  stalls.disable();
  assert.ok(result.response.includes('denied'), result.response);
  const worstMs = stalls.max / 1e6;
  assert.ok(worstMs < limitMs, `the main thread stalled for ${Math.round(worstMs)} ms while one approval request under the cap was read`);
}

// Under the cap, a path of 8,191 parts: where it lands was read part by part from its end (a
// realpath and a dirname of the whole path each), quadratic: 1.4-2.4 s of main thread per request.
const deep = '/' + 'a/'.repeat((MAX_APPROVAL_TEXT_CHARS - 2) / 2); // 16,383 characters
for (const [name, approve] of [
  ['a write of a path of 8,191 parts', { kind: 'write', command_or_path: deep }],
  ['an exec cp to a path of 8,191 parts', { kind: 'exec', command_or_path: `cp x ${deep.slice(0, MAX_APPROVAL_TEXT_CHARS - 5)}` }],
] as const) {
  test(`${name}, under MAX_APPROVAL_TEXT_CHARS, never stalls the gateway's main thread for 200 ms`, async () => {
    const t = startBroker(['asker']);
    t.root.onApproval(() => 'denied');
    try {
      await readWithin(t, approve, 200);
    } finally {
      await t.close();
    }
  });
}

// Under the cap, 4,000 written paths (`$a` is any program: rm, chmod, … each writes its
// arguments): where each lands was read, two or three realpaths each, 0.3-1.3 s of main thread.
test("an exec writing 4,000 paths, under MAX_APPROVAL_TEXT_CHARS, never stalls the gateway's main thread for 400 ms; past 64 followed paths it is tagged unread-landing", async () => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'approval-size-ws-')));
  const t = startBroker(['asker'], { root: { workspaceRoot: ws } });
  const danger: string[][] = [];
  t.root.onApproval((request) => {
    danger.push(request.danger);
    return 'denied';
  });
  try {
    let many = '$a'; // `$a` may be rm or chmod: each of its arguments is a path it writes
    for (let i = 0; many.length < MAX_APPROVAL_TEXT_CHARS - 8; i++) many += ` ${i.toString(36)}`;
    const few = `cp ${Array.from({ length: 63 }, (_, i) => `f${i}`).join(' ')}`;
    await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: few } })); // the code compiled: the line's reading is measured
    await readWithin(t, { kind: 'exec', command_or_path: many }, 400);
    await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: few } }));
    assert.deepEqual(danger, [[], ['unread-landing'], []], 'where the 65th path lands is not read: it could be anywhere; 63 paths (and cp\'s own word) are read');
  } finally {
    await t.close();
    rmSync(ws, { recursive: true, force: true });
  }
});

// Under the cap, 8,192 commands (`a;a;…`): each exec deny rule read the whole line again (10 rules
// 0.5 s, 40 rules 1.2-1.8 s, so 160 rules 5 s and more); read once, 0.2-0.5 s on this shared machine.
test("a line of 8,192 commands under MAX_APPROVAL_TEXT_CHARS, against 160 deny rules, never stalls the gateway's main thread for 1.5 s", async () => {
  const t = startBroker(['asker']);
  t.root.onApproval(() => 'denied');
  for (let i = 0; i < 160; i++) t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: i % 2 ? { exact: `make deploy-${i}` } : { prefix: `git push-${i}` } });
  try {
    await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: 'a;'.repeat(200) } })); // the code compiled: the line's reading is measured
    await readWithin(t, { kind: 'exec', command_or_path: 'a;'.repeat(MAX_APPROVAL_TEXT_CHARS / 2) }, 1500);
  } finally {
    await t.close();
  }
});

/**
 * What one hostile `human.approve` can cost the gateway's main thread. The broker reads a
 * worker's command synchronously (danger tags, simple commands, proposals: main/broker/approvals)
 * before anyone is asked; the wire lets `command_or_path` be as long as a frame (33 MiB). Real
 * worker (children/agent.ts) on a real socketpair; the CPU the gateway's process spends while the
 * approval is handled is measured (test/helpers/cpu-meter.ts: it bounds every stall of the main
 * thread, and unlike a wall-clock stall it does not grow when the machine is busy with other work).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAX_APPROVAL_TEXT_CHARS, type AuditRow } from '../../main/broker/approvals/index.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { plan, splitJson, startBroker } from './helpers.js';

test("a worker's approval request with a 350 KB command line costs the gateway's process under a second of CPU more than a plain one, so never stalls its main thread longer", async () => {
  const t = startBroker(['asker']);
  const seen: number[] = [];
  t.root.onApproval((request) => {
    seen.push(request.command_or_path.length);
    return 'denied';
  });
  try {
    const command = 'env -S '.repeat(50_000); // 350,000 characters of one program's options
    await readWithin(t, { kind: 'exec', command_or_path: command }, 1_000);
    assert.deepEqual(seen, ['true'.length], 'the plain request was asked; the long one was refused unasked');
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

/**
 * Asks `approve` of a worker, the root denying, and the same task asking `true`: the hostile request
 * costs the gateway's process under `limitMs` of CPU more than the plain one (so its reading never
 * holds the main thread longer). The plain task pays the rest of a call (the worker's spawn, its
 * frames), which is not what is measured.
 */
async function readWithin(t: ReturnType<typeof startBroker>, approve: { kind: string; command_or_path: string }, limitMs: number): Promise<void> {
  const plain = await cpuDuring(() => t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: 'true' } })));
  const hostile = await cpuDuring(() => t.root.invoke('asker', plan({ approve })));
  assert.ok(plain.result.response.includes('denied') && hostile.result.response.includes('denied'), hostile.result.response);
  const extraMs = hostile.cpuMs - plain.cpuMs;
  assert.ok(
    extraMs < limitMs,
    `reading one approval request under the cap cost the gateway's process ${Math.round(extraMs)} ms of CPU more than a plain one (${Math.round(hostile.cpuMs)} against ${Math.round(plain.cpuMs)} ms)`,
  );
}

// Under the cap, a path of 8,191 parts: where it lands was read part by part from its end (a
// realpath and a dirname of the whole path each), quadratic: 1.4-2.4 s of main thread per request;
// read once, 50-130 ms of CPU on this shared machine. Each bound below sits well under the cost it
// guards against and well over what a loaded CI machine's CPU time makes of the fixed reading.
const deep = '/' + 'a/'.repeat((MAX_APPROVAL_TEXT_CHARS - 2) / 2); // 16,383 characters
for (const [name, approve] of [
  ['a write of a path of 8,191 parts', { kind: 'write', command_or_path: deep }],
  ['an exec cp to a path of 8,191 parts', { kind: 'exec', command_or_path: `cp x ${deep.slice(0, MAX_APPROVAL_TEXT_CHARS - 5)}` }],
] as const) {
  test(`${name}, under MAX_APPROVAL_TEXT_CHARS, costs the gateway's process under 500 ms of CPU more than a plain one`, async () => {
    const t = startBroker(['asker']);
    t.root.onApproval(() => 'denied');
    try {
      await readWithin(t, approve, 500);
    } finally {
      await t.close();
    }
  });
}

// Under the cap, 4,000 written paths (`$a` is any program: rm, chmod, … each writes its
// arguments): where each lands was read, two or three realpaths each, 0.3-1.3 s of main thread.
// The tag is what shows the cap (64 followed paths); the CPU bound catches a reading gone quadratic.
test("an exec writing 4,000 paths, under MAX_APPROVAL_TEXT_CHARS, costs the gateway's process under a second of CPU more than a plain one; past 64 followed paths it is tagged unread-landing", async () => {
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
    await readWithin(t, { kind: 'exec', command_or_path: many }, 1_000);
    await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: few } }));
    assert.deepEqual(danger, [[], [], ['unread-landing'], []], 'where the 65th path lands is not read: it could be anywhere; 63 paths (and cp\'s own word) are read');
  } finally {
    await t.close();
    rmSync(ws, { recursive: true, force: true });
  }
});

// Under the cap, 8,192 commands (`a;a;…`): each exec deny rule read the whole line again (10 rules
// 0.5 s, 40 rules 1.2-1.8 s, so 160 rules 5 s and more); read once, 0.2-1 s of CPU on this shared machine.
test("a line of 8,192 commands under MAX_APPROVAL_TEXT_CHARS, against 160 deny rules, costs the gateway's process under 2.5 s of CPU more than a plain one", async () => {
  const t = startBroker(['asker']);
  t.root.onApproval(() => 'denied');
  for (let i = 0; i < 160; i++) t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: i % 2 ? { exact: `make deploy-${i}` } : { prefix: `git push-${i}` } });
  try {
    await t.root.invoke('asker', plan({ approve: { kind: 'exec', command_or_path: 'a;'.repeat(200) } })); // the code compiled: the line's reading is measured
    await readWithin(t, { kind: 'exec', command_or_path: 'a;'.repeat(MAX_APPROVAL_TEXT_CHARS / 2) }, 2_500);
  } finally {
    await t.close();
  }
});

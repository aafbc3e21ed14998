// The bridge's main side on its own (a real gateway and broker, agents that are real children),
// and the real preload's shape in Chromium: foreign senders and malformed payloads refused,
// answers only to what is waiting, a window that goes away denies and withdraws, the token
// never crosses, and the preload's channels are main's.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { BridgeHost, BridgeRefusal, type IpcSender } from '../../main/app/bridge/bridge-host.js';
import {
  BRIDGE_CHANNELS,
  CHATTY_API_KEYS,
  EVENT_CHANNELS,
  INVOKE_CHANNELS,
  type ApprovalRule,
  type AuditRow,
  type EventChannel,
  type GatewayInfo,
  type PendingApproval,
  type PendingQuestion,
  type Snapshot,
  type TaskUpdate,
} from '../../main/app/bridge/contract.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { AGENT, plan } from '../broker/helpers.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { bindWindow, installPreload, launchChromium, serveDemo } from '../helpers/renderer-page.js';

const TRUSTED = 'http://127.0.0.1:1/renderer-demo/index.html';
const top: IpcSender = { url: TRUSTED, isMainFrame: true };

let gw: RunningGateway;

before(async () => {
  gw = await startGateway({ list: () => [{ name: 'text-tools', version: '1.0.0', description: 'texts', protocols: { mcp: true, a2a: false } }] }, { broker: { cancelGraceMs: 1_000, log: () => {} } });
  // The broker tests' scriptable agent (JSON plans), a real child per task.
  gw.gateway.withVirtualAgent('agent', new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', AGENT], reapGraceMs: 1_000 }));
});

after(async () => {
  await gw?.close();
});

/** A host with a window attached whose events are recorded; `next(channel)` resolves at the next one on it. */
function hostWithWindow(): {
  host: BridgeHost;
  events: { channel: EventChannel; payload: unknown }[];
  next<T>(channel: EventChannel, pred?: (payload: T) => boolean): Promise<T>;
} {
  const host = new BridgeHost(gw.gateway, { socketPath: gw.socketPath, tokenPath: gw.tokenPath }, (url) => url === TRUSTED);
  const events: { channel: EventChannel; payload: unknown }[] = [];
  let waiters: { channel: EventChannel; pred: (p: unknown) => boolean; resolve: (p: unknown) => void }[] = [];
  host.attachWindow((channel, payload) => {
    events.push({ channel, payload });
    waiters = waiters.filter((w) => {
      if (w.channel !== channel || !w.pred(payload)) return true;
      w.resolve(payload);
      return false;
    });
  });
  return {
    host,
    events,
    next: <T>(channel: EventChannel, pred: (payload: T) => boolean = () => true) =>
      new Promise<T>((resolve) => {
        const seen = events.find((e) => e.channel === channel && pred(e.payload as T));
        if (seen) return resolve(seen.payload as T);
        waiters.push({ channel, pred: pred as (p: unknown) => boolean, resolve: resolve as (p: unknown) => void });
      }),
  };
}

const ended = (taskId: string) => (u: TaskUpdate) => u.type === 'ended' && u.taskId === taskId;

describe('bridge host: who may call, and what', () => {
  test('foreign senders are refused on every channel: an iframe, another page, another scheme', async () => {
    const { host } = hostWithWindow();
    try {
      for (const channel of Object.values(INVOKE_CHANNELS)) {
        for (const sender of [
          { url: TRUSTED, isMainFrame: false },
          { url: 'https://evil.example/renderer-demo/index.html', isMainFrame: true },
          { url: 'http://127.0.0.1:1/renderer-demo/index.html?x', isMainFrame: true },
          { url: 'file:///renderer-demo/index.html', isMainFrame: true },
          { url: '', isMainFrame: true },
        ]) {
          await assert.rejects(host.handle(channel, sender, undefined), (err: Error) => err instanceof BridgeRefusal && /is not the trusted window/.test(err.message), `${channel} from ${JSON.stringify(sender)}`);
        }
      }
      // A refused start started nothing.
      assert.deepEqual(((await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot).tasks, []);
    } finally {
      host.close();
    }
  });

  test('unknown channels and malformed payloads are refused before anything happens', async () => {
    const { host, events } = hostWithWindow();
    try {
      await assert.rejects(host.handle('chatty:shell-exec', top, 'rm -rf /'), /unknown channel chatty:shell-exec/);
      await assert.rejects(host.handle('__proto__', top, undefined), /unknown channel/);
      await assert.rejects(host.handle(BRIDGE_CHANNELS.edgeRow, top, undefined), /unknown channel/, 'an event channel is not callable');
      const malformed: [string, unknown][] = [
        [INVOKE_CHANNELS.gatewayInfo, { sneaky: true }],
        [INVOKE_CHANNELS.listAgents, 1],
        [INVOKE_CHANNELS.snapshot, null],
        [INVOKE_CHANNELS.startTask, undefined],
        [INVOKE_CHANNELS.startTask, { agent: 'agent' }],
        [INVOKE_CHANNELS.startTask, { agent: 'agent', prompt: '' }],
        [INVOKE_CHANNELS.startTask, { agent: 'agent', prompt: 'x'.repeat(64 * 1024 + 1) }],
        [INVOKE_CHANNELS.startTask, { agent: '', prompt: 'hi' }],
        [INVOKE_CHANNELS.startTask, { agent: 'agent', prompt: 'hi', spawnContext: { workspace_root: '/' } }],
        [INVOKE_CHANNELS.startTask, { agent: ['agent'], prompt: 'hi' }],
        [INVOKE_CHANNELS.startTask, 'agent hi'],
        [INVOKE_CHANNELS.cancelTask, { taskId: 'task-1; rm' }],
        [INVOKE_CHANNELS.cancelTask, { taskId: 1 }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'yes' }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved', extra: 1 }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'question-x', verdict: 'denied' }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'denied', remember: 'always' }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved', match: { exact: 'make' } }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved', remember: 'forever' }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved', remember: 'task', match: { regex: '.*' } }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved', remember: 'task', match: { exact: 'a', prefix: 'b' } }],
        [INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved', remember: 'task', match: { exact: 'x'.repeat(8 * 1024 + 1) } }],
        [INVOKE_CHANNELS.listApprovalRules, { all: true }],
        [INVOKE_CHANNELS.revokeApprovalRule, { id: '' }],
        [INVOKE_CHANNELS.revokeApprovalRule, 'rule-1'],
        [INVOKE_CHANNELS.answerQuestion, { requestId: 'question-1', answers: [] }],
        [INVOKE_CHANNELS.answerQuestion, { requestId: 'question-1', answers: [{ id: 'q', answer: 'a' }] }],
        [INVOKE_CHANNELS.answerQuestion, { requestId: 'question-1', answers: [{ id: 'q', answer: 7, custom: false }] }],
        [INVOKE_CHANNELS.postMessage, { to: 'root', text: '' }],
        [INVOKE_CHANNELS.postMessage, { to: 'x', text: 'y'.repeat(8 * 1024 + 1) }],
      ];
      for (const [channel, payload] of malformed) {
        await assert.rejects(host.handle(channel, top, payload), (err: Error) => err instanceof BridgeRefusal && err.message === `refused ${channel}: invalid payload`, `${channel} ${JSON.stringify(payload)?.slice(0, 80)}`);
      }
      assert.deepEqual(events, [], 'nothing was started or answered');
    } finally {
      host.close();
    }
  });

  test('the token never crosses: gateway info has the paths only', async () => {
    const { host } = hostWithWindow();
    try {
      const info = (await host.handle(INVOKE_CHANNELS.gatewayInfo, top, undefined)) as GatewayInfo;
      assert.deepEqual(info, { socketPath: gw.socketPath, tokenPath: gw.tokenPath, runtimeDir: gw.runtimeDir });
      const everything = JSON.stringify([info, await host.handle(INVOKE_CHANNELS.snapshot, top, undefined), await host.handle(INVOKE_CHANNELS.listModules, top, undefined)]);
      assert.ok(!everything.includes(gw.gateway.token()));
    } finally {
      host.close();
    }
  });

  test('an answer to a request that is not waiting is refused; a second answer too', async () => {
    const { host, next } = hostWithWindow();
    try {
      await assert.rejects(host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: 'approval-99', verdict: 'approved' }), /no approval approval-99 is waiting/);
      await assert.rejects(host.handle(INVOKE_CHANNELS.answerQuestion, top, { requestId: 'question-99', answers: [{ id: 'q', answer: 'a', custom: false }] }), /no question question-99 is waiting/);
      await assert.rejects(host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId: 'task-99' }), /task-99 is not running/);

      const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'make' } }) })) as { taskId: string };
      const approval = await next<PendingApproval>(EVENT_CHANNELS.approval);
      assert.equal(approval.taskId, taskId);
      assert.match(approval.asker.agent, /^agent-\d+$/);
      // An approval id is not a question's.
      await assert.rejects(host.handle(INVOKE_CHANNELS.answerQuestion, top, { requestId: approval.requestId.replace('approval', 'question'), answers: [{ id: 'q', answer: 'a', custom: false }] }), /is waiting/);
      assert.deepEqual(await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'approved' }), { accepted: true });
      await assert.rejects(host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'denied' }), /is waiting/);
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(taskId));
      const view = ((await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot).tasks.find((t) => t.taskId === taskId);
      assert.ok(view?.entries.some((e) => e.kind === 'text' && e.text === '["approved"]'));
      await assert.rejects(host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId }), /is not running/);
    } finally {
      host.close();
    }
  });

  test("a question's answers must answer each of its questions once", async () => {
    const { host, next } = hostWithWindow();
    try {
      const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, {
        agent: 'agent',
        prompt: plan({ ask: [{ id: 'a', question: 'A?', options: ['1', '2'] }, { id: 'b', question: 'B?' }] }),
      })) as { taskId: string };
      const question = await next<PendingQuestion>(EVENT_CHANNELS.question);
      assert.deepEqual(question.questions, [{ id: 'a', question: 'A?', options: ['1', '2'] }, { id: 'b', question: 'B?', options: [] }]);
      const answer = (answers: { id: string; answer: string; custom: boolean }[]) => host.handle(INVOKE_CHANNELS.answerQuestion, top, { requestId: question.requestId, answers });
      await assert.rejects(answer([{ id: 'a', answer: '1', custom: false }]), /must answer each/);
      await assert.rejects(answer([{ id: 'a', answer: '1', custom: false }, { id: 'a', answer: '2', custom: false }]), /must answer each/);
      await assert.rejects(answer([{ id: 'a', answer: '1', custom: false }, { id: 'c', answer: 'x', custom: true }]), /must answer each/);
      assert.deepEqual(await answer([{ id: 'b', answer: 'free', custom: true }, { id: 'a', answer: '2', custom: false }]), { accepted: true });
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(taskId));
      const view = ((await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot).tasks.find((t) => t.taskId === taskId);
      assert.ok(view?.entries.some((e) => e.kind === 'text' && e.text === JSON.stringify([{ id: 'b', answer: 'free', custom: true }, { id: 'a', answer: '2', custom: false }])));
    } finally {
      host.close();
    }
  });

  test('a window reset denies waiting approvals and withdraws questions; without a window approvals are denied at once', async () => {
    const { host, next } = hostWithWindow();
    try {
      const a = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'x' } }) })) as { taskId: string };
      const q = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ ask: [{ id: 'q', question: 'Q?' }] }) })) as { taskId: string };
      await next(EVENT_CHANNELS.approval);
      await next(EVENT_CHANNELS.question);
      host.windowReset('the window was reloaded');
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(a.taskId));
      const qEnd = await next<TaskUpdate & { type: 'ended' }>(EVENT_CHANNELS.task, ended(q.taskId));
      assert.equal(qEnd.state, 'failed');
      assert.match(qEnd.error ?? '', /the question was withdrawn: the window was reloaded/);
      const snap = (await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot;
      assert.ok(snap.tasks.find((t) => t.taskId === a.taskId)?.entries.some((e) => e.kind === 'text' && e.text === '["denied"]'));
      assert.deepEqual([snap.approvals, snap.questions], [[], []]);

      // A request that comes after the reset is the new page's: it waits, and the snapshot the new page asks for has it.
      const c = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'after' } }) })) as { taskId: string };
      const late = await next<PendingApproval>(EVENT_CHANNELS.approval, (p) => p.commandOrPath === 'after');
      assert.deepEqual(((await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot).approvals.map((p) => p.requestId), [late.requestId]);
      await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: late.requestId, verdict: 'approved' });
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(c.taskId));

      host.pageGone();
      const b = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'y' } }) })) as { taskId: string };
      for (;;) {
        const view = ((await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot).tasks.find((t) => t.taskId === b.taskId);
        if (view?.state !== 'running') {
          assert.ok(view?.entries.some((e) => e.kind === 'text' && e.text === '["denied"]'), 'nobody to ask: denied');
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      host.close();
    }
  });

  test('an approval carries what the gateway vouches for; "remember" takes only a match it offered, never for hidden characters; the rule is listed, revoked, and each decision is an audit row', async () => {
    const { host, next, events } = hostWithWindow();
    try {
      const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'npm test -- --watch=false' } }) })) as { taskId: string };
      const approval = await next<PendingApproval>(EVENT_CHANNELS.approval);
      assert.equal(approval.role, 'agent');
      assert.equal(approval.hidden, false);
      assert.deepEqual(approval.danger, []);
      assert.ok(approval.rootTask, 'the root task, from the broker');
      assert.deepEqual(approval.proposals[0], { exact: 'npm test -- --watch=false' });
      const answer = (extra: object) => host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'approved', ...extra });
      await assert.rejects(answer({ remember: 'always', match: { prefix: 'rm' } }), /the match is not one approval-\d+ offers/);
      await assert.rejects(answer({ remember: 'task', match: { glob: '**' } }), /the match is not one approval-\d+ offers/);
      assert.deepEqual(await answer({ remember: 'task', match: approval.proposals[0] }), { accepted: true });
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(taskId));
      const row = await next<AuditRow>(EVENT_CHANNELS.approvalDecision);
      assert.deepEqual([row.verdict, row.by, row.command_or_path, row.kind], ['approved', 'human', 'npm test -- --watch=false', 'exec']);
      assert.deepEqual(((await host.handle(INVOKE_CHANNELS.snapshot, top, undefined)) as Snapshot).auditRows.at(-1), row);

      const always = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'make lint' } }) })) as { taskId: string };
      const second = await next<PendingApproval>(EVENT_CHANNELS.approval, (a) => a.commandOrPath === 'make lint');
      assert.deepEqual(await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: second.requestId, verdict: 'approved', remember: 'always' }), { accepted: true });
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(always.taskId));
      const rules = (await host.handle(INVOKE_CHANNELS.listApprovalRules, top, undefined)) as ApprovalRule[];
      const rule = rules.find((r) => 'exact' in r.match && r.match.exact === 'make lint');
      assert.ok(rule, JSON.stringify(rules));
      assert.deepEqual([rule.effect, rule.kind, rule.agent, rule.task], ['allow', 'exec', 'agent', undefined]);
      assert.deepEqual(await host.handle(INVOKE_CHANNELS.revokeApprovalRule, top, { id: rule.id }), { revoked: true });
      assert.deepEqual(await host.handle(INVOKE_CHANNELS.revokeApprovalRule, top, { id: rule.id }), { revoked: false });
      assert.equal(((await host.handle(INVOKE_CHANNELS.listApprovalRules, top, undefined)) as ApprovalRule[]).some((r) => r.id === rule.id), false);

      const hidden = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'ls\u200b -la' } }) })) as { taskId: string };
      const third = await next<PendingApproval>(EVENT_CHANNELS.approval, (a) => a.commandOrPath === 'ls\u200b -la');
      assert.equal(third.hidden, true);
      assert.deepEqual(third.proposals, []);
      await assert.rejects(host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: third.requestId, verdict: 'approved', remember: 'task' }), /holds hidden characters: it may be approved once only/);
      assert.deepEqual(await host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: third.requestId, verdict: 'denied' }), { accepted: true });
      await next<TaskUpdate>(EVENT_CHANNELS.task, ended(hidden.taskId));
      assert.ok(events.filter((e) => e.channel === EVENT_CHANNELS.approvalDecision).length >= 3);
    } finally {
      host.close();
    }
  });

  test('a withdrawn approval closes: the worker hangs up while it waits', async () => {
    const { host, next } = hostWithWindow();
    try {
      const { taskId } = (await host.handle(INVOKE_CHANNELS.startTask, top, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: 'z' } }) })) as { taskId: string };
      const approval = await next<PendingApproval>(EVENT_CHANNELS.approval);
      await host.handle(INVOKE_CHANNELS.cancelTask, top, { taskId });
      const withdrawn = await next<{ requestId: string; reason: string }>(EVENT_CHANNELS.withdrawn);
      assert.equal(withdrawn.requestId, approval.requestId);
      await assert.rejects(host.handle(INVOKE_CHANNELS.answerApproval, top, { requestId: approval.requestId, verdict: 'approved' }), /is waiting/);
    } finally {
      host.close();
    }
  });
});

describe('the real preload in Chromium', () => {
  let browser: Browser;
  let demo: { base: string; server: Server };
  let host: BridgeHost;

  before(async () => {
    demo = await serveDemo({
      '/renderer-demo/framed.html': '<!doctype html><iframe src="/renderer-demo/inner.html"></iframe>',
      '/renderer-demo/inner.html': '<!doctype html><p>inner</p>',
      '/renderer-demo/blank.html': '<!doctype html><title>blank</title><p>the preload alone</p>',
    });
    host = new BridgeHost(gw.gateway, { socketPath: gw.socketPath, tokenPath: gw.tokenPath }, (url) => url === `${demo.base}/renderer-demo/index.html`);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    host?.close();
    demo?.server.close();
  });

  test('the page has no Node and a frozen bridge of exactly the contract\'s functions; each reaches its own channel in main', async () => {
    const page = await browser.newPage();
    const invoked: string[] = [];
    await installPreload(page, {
      handle: (channel, sender, payload) => {
        invoked.push(channel);
        return host.handle(channel, sender, payload).catch((err: Error) => ({ refused: err.message }));
      },
    });
    try {
      // A page without the app's script, so only this test calls and listens (main refuses its calls: not the app's page).
      await page.goto(`${demo.base}/renderer-demo/blank.html`);
      const shape = await page.evaluate(() => {
        const chatty = (window as unknown as { chatty: Record<string, unknown> }).chatty;
        return {
          keys: Object.keys(chatty).sort(),
          functions: Object.values(chatty).every((v) => typeof v === 'function'),
          frozen: Object.isFrozen(chatty),
          require: typeof (window as unknown as { require?: unknown }).require,
          process: typeof (window as unknown as { process?: unknown }).process,
          ipc: typeof (window as unknown as { ipcRenderer?: unknown }).ipcRenderer,
        };
      });
      assert.deepEqual(shape, { keys: [...CHATTY_API_KEYS].sort(), functions: true, frozen: true, require: 'undefined', process: 'undefined', ipc: 'undefined' });
      invoked.length = 0;
      // Every invoke function, called with a payload main refuses (or none): it lands on main's channel of its name.
      await page.evaluate(async () => {
        const chatty = (window as unknown as { chatty: Record<string, (arg?: unknown) => Promise<unknown>> }).chatty;
        for (const name of Object.keys(chatty).filter((k) => !k.startsWith('on')).sort()) await chatty[name]!({ bogus: true });
      });
      const expected = Object.entries(INVOKE_CHANNELS)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([, channel]) => channel);
      assert.deepEqual(invoked, expected);
      // Every subscription listens on main's event channel of its name, and unsubscribes.
      const { emit } = { emit: (channel: string, payload: unknown) => page.evaluate(([c, p]) => (window as unknown as { __chattyIpcEmit(c: string, p: unknown): void }).__chattyIpcEmit(c, p), [channel, payload] as const) };
      await page.evaluate(() => {
        const chatty = (window as unknown as { chatty: Record<string, (l: (p: unknown) => void) => () => void> }).chatty;
        const got: Record<string, unknown[]> = {};
        const offs: (() => void)[] = [];
        for (const name of Object.keys(chatty).filter((k) => k.startsWith('on'))) {
          got[name] = [];
          offs.push(chatty[name]!((p) => got[name]!.push(p)));
        }
        (window as unknown as { __got: unknown; __offs: unknown }).__got = got;
        (window as unknown as { __offs: unknown }).__offs = offs;
      });
      const names: Record<string, string> = { edgeRow: 'onEdgeRow', task: 'onTask', approval: 'onApproval', question: 'onQuestion', grant: 'onGrant', withdrawn: 'onWithdrawn', message: 'onMessage', approvalDecision: 'onApprovalDecision', modules: 'onModules', refused: 'onRefused' };
      for (const [key, channel] of Object.entries(EVENT_CHANNELS)) await emit(channel, { probe: key });
      const got = await page.evaluate(() => (window as unknown as { __got: Record<string, unknown[]> }).__got);
      assert.deepEqual(got, Object.fromEntries(Object.entries(EVENT_CHANNELS).map(([key]) => [names[key], [{ probe: key }]])));
      await page.evaluate(() => {
        for (const off of (window as unknown as { __offs: (() => void)[] }).__offs) off();
      });
      for (const channel of Object.values(EVENT_CHANNELS)) await emit(channel, { again: true });
      const after = await page.evaluate(() => (window as unknown as { __got: Record<string, unknown[]> }).__got);
      assert.deepEqual(after, got, 'nothing arrives after unsubscribing');
    } finally {
      await page.close();
    }
  });

  test('a call from an iframe is refused by the main side', async () => {
    const page = await browser.newPage();
    await bindWindow(page, host);
    try {
      await page.goto(`${demo.base}/renderer-demo/framed.html`);
      const inner = page.frames().find((f) => f.url().endsWith('/inner.html'));
      assert.ok(inner);
      const outcome = await inner.evaluate(() =>
        (window as unknown as { chatty: { startTask(r: unknown): Promise<unknown> } }).chatty.startTask({ agent: 'agent', prompt: '{"echo":"x"}' }).then(
          () => 'answered',
          (err: Error) => err.message,
        ),
      );
      assert.match(outcome, /refused chatty:start-task: sender .*inner\.html is not the trusted window/);
    } finally {
      await page.close();
    }
  });
});

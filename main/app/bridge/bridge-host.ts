import { dirname } from 'node:path';
import type { z } from 'zod';
import { describeMatch } from '../../broker/approvals/index.js';
import { checkRelayedAnswers, type ApprovalDecision, type ApprovalRequest, type QuestionToRoot, type RootInvokeResult, type RootTransport } from '../../broker/index.js';
import { hasHidden } from '../../display/index.js';
import type { ProgressEvent } from '../../fabric/wire/broker-to-worker.js';
import type { ProtocolGateway, StartedGateway } from '../../gateway/index.js';
import { askReach, shortDigest, type PluginGrantDecision, type PluginGrantRequest, type PluginGrants } from '../../plugins/grants/index.js';
import {
  ANSWER_LIMITS,
  EVENT_CHANNELS,
  INVOKE_CHANNELS,
  InvokeRequestSchemas,
  type AgentSummary,
  type AnswerApproval,
  type AnswerGrant,
  type AnswerQuestion,
  type ApprovalMatch,
  type ApprovalRule,
  type Asker,
  type AuditRow,
  type EdgeRow,
  type EventChannel,
  type EventPayloads,
  type GatewayInfo,
  type InvokeChannel,
  type InvokeResponses,
  type MailEntry,
  type MailOutcome,
  type ModuleSummary,
  type PendingApproval,
  type PendingGrant,
  type PendingQuestion,
  type RevokeApprovalRule,
  type Snapshot,
  type StartTask,
  type TaskNode,
  type TaskState,
  type TaskView,
  type TimelineEntry,
} from './contract.js';
import { ModuleListFeed, moduleSummaries, pendingModules } from './module-list.js';
import { MAX_ERROR_CHARS, MAX_TEXT_PER_TASK, keptText } from './kept-text.js';
import { TaskTree, relayedStart } from './task-tree.js';

/** Who sent an IPC message, as the Electron layer reports it. */
export interface IpcSender {
  /** The URL of the sending frame. */
  url: string;
  /** Whether the sender is the window's top frame (not an iframe). */
  isMainFrame: boolean;
  /** Why the window's top frame is refused though it is at the page (its preload not the checked copy), saying what to do. */
  refusal?: string;
}

export class BridgeRefusal extends Error {
  override readonly name = 'BridgeRefusal';
}

/** How the host reaches the one app window: `webContents.send` in Electron. */
export type WindowSend = <C extends EventChannel>(channel: C, payload: EventPayloads[C]) => void;

export interface BridgeHostOptions {
  /** Where refusals and other notes go (the main-process log). */
  log?: (line: string) => void;
  /** The plugins' grant desk (`registry.grants`): its capability requests are put to the window too. */
  grants?: GrantDesk | undefined;
}

/** What the bridge needs of a `PluginGrants` desk: to be its one handler. */
export type GrantDesk = Pick<PluginGrants, 'onRequest'>;

/**
 * The number of the last request put to a page, shared by every host in the process: a window
 * moved to another bridge (of this gateway or another) never sees an id it already holds, so a
 * popover left from the old bridge can never answer the new one's request.
 */
let lastRequest = 0;
const nextRequestId = <K extends 'approval' | 'question' | 'grant'>(kind: K): `${K}-${number}` => `${kind}-${++lastRequest}`;

/** Kept for a (re)loaded window's snapshot. */
const MAX_EDGE_ROWS = 200;
const MAX_AUDIT_ROWS = 200;
const MAX_MAIL = 200;
const MAX_ENDED_TASKS = 50;
const MAX_ENTRIES_PER_TASK = 1000;

interface TaskRecord {
  view: TaskView;
  /** Characters of text in `view.entries`. */
  bytes: number;
  controller: AbortController;
  settled: Promise<void>;
  /** `view.nodes` with their names in a set, bounded (`MAX_NODES_PER_TASK`). */
  tree: TaskTree;
  /** The agent the root called, as the broker admitted it: the node the task's steps and text come from. */
  top?: string;
  /** The nodes the broker admitted for this task (`{Admitted}`): its own record, not a worker's step. */
  admitted: Set<string>;
  /** The gateway's root task id of this task, once an approval from an admitted node has named it. */
  rootTask?: string;
}

type Pending =
  | { kind: 'approval'; view: PendingApproval; task: TaskRecord | undefined; settle: (decision: ApprovalDecision) => void; fail: (err: Error) => void }
  | {
      kind: 'question';
      view: PendingQuestion;
      task: TaskRecord | undefined;
      settle: (answers: AnswerQuestion['answers']) => void;
      fail: (err: Error) => void;
    }
  | { kind: 'grant'; view: PendingGrant; settle: (decision: PluginGrantDecision) => void };

/**
 * The main-process side of the bridge, free of Electron so it runs under test. It is the root's
 * human: it answers the root transport's approvals and questions by asking the window, runs the
 * tasks the window starts, relays the root's mailbox, the edge log and the plugin list as it
 * changes (`ModuleListFeed`). Every call is checked
 * (the sender is the window's top frame at the app's page, the channel is known, the payload
 * parses) before anything happens. `main/app/electron-bridge.ts` binds it to `ipcMain` and the
 * window's `webContents`.
 *
 * Window lifecycle (electron-bridge.ts calls these): `attachWindow(send)` when the window exists,
 * and again when a crashed page is loaded again; `windowReset(reason)` when its page reloads or
 * navigates (every waiting approval is denied, every waiting question withdrawn, since nobody is
 * looking at them any more); `pageGone(reason)` when there is no page to ask: it crashed, or the
 * top frame is not the page (another URL, a fragment, an error document) (the same, and from then
 * on approvals are denied and questions refused at once until `attachWindow` again); `close()`
 * when the window closes or the bridge is detached (`pageGone()`, and the host ends for good).
 */
export class BridgeHost {
  private readonly root: RootTransport;
  private readonly log: (line: string) => void;
  private send: WindowSend | undefined;
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly pending = new Map<string, Pending>();
  private readonly mailbox: MailEntry[] = [];
  private readonly edgeRows: EdgeRow[] = [];
  private readonly auditRows: AuditRow[] = [];
  private readonly approvals: ProtocolGateway['approvals'];
  private readonly unsubscribe: (() => void)[] = [];
  /** This host as the root's human (its approval and question handlers), until another takes the root. */
  private readonly rootHandlers: (() => void)[] = [];
  private readonly grants: GrantDesk | undefined;
  /** Removes this host as the grant desk's handler (set while it holds the desk). */
  private deskHandler: (() => void) | undefined;
  private nextTask = 0;
  private nextMail = 0;
  private closed = false;

  constructor(
    private readonly gateway: ProtocolGateway,
    private readonly started: StartedGateway,
    /** The only page allowed to call: the app window's own URL. */
    private readonly trustedUrl: (url: string) => boolean,
    options: BridgeHostOptions = {},
  ) {
    this.root = gateway.transport();
    this.log = options.log ?? (() => {});
    this.approvals = gateway.approvals;
    this.grants = options.grants;
    this.takeRoot();
    this.takeDesk();
    this.unsubscribe.push(
      this.root.onMessage((message) => this.addMail({ id: message.id, direction: 'in', from: message.from, text: message.text, at: Date.now() })),
      gateway.onEdge((row) => this.addEdgeRow({ ...row })),
    );
    this.unsubscribe.push(this.approvals.onDecision((row) => this.addAuditRow(structuredClone(row))));
    this.unsubscribe.push(new ModuleListFeed(gateway.registry, (list) => this.emit(EVENT_CHANNELS.modules, list), this.log).start());
  }

  readonly invokeChannels = Object.keys(InvokeRequestSchemas) as InvokeChannel[];

  /** One renderer call: refused (rejects with `BridgeRefusal`) unless the sender, channel and payload are all right. */
  async handle(channel: string, sender: IpcSender, payload: unknown): Promise<unknown> {
    try {
      return await this.dispatch(channel, sender, payload);
    } catch (err) {
      if (err instanceof BridgeRefusal) this.log(`bridge: ${err.message}`);
      throw err;
    }
  }

  /**
   * Makes this host the root's human: the root's approvals and questions come here from the one
   * host that had them before. The constructor does it; electron-bridge.ts again when the bridge
   * attached after this one on the gateway is gone and this one's window is still open.
   */
  takeRoot(): void {
    if (this.closed) return;
    for (const off of this.rootHandlers.splice(0)) off();
    this.rootHandlers.push(
      this.root.onApproval((request, signal) => this.askApproval(request, signal)),
      this.root.onQuestion((request, signal) => this.askQuestion(request, signal)),
    );
  }

  /**
   * Makes this host the grant desk's handler (when it was given one): the desk hands it the
   * requests still open. The constructor does it; electron-bridge.ts again when the bridge given
   * the same desk after this one is gone and this one's window is still open (whatever the gateway).
   */
  takeDesk(): void {
    if (this.closed || !this.grants) return;
    this.deskHandler?.();
    this.deskHandler = this.grants.onRequest((request, signal) => this.askGrant(request, signal));
  }

  /** This host no longer answers for the desk (its window is gone): what it held goes back to the desk, for its next handler. */
  dropDesk(): void {
    const off = this.deskHandler;
    this.deskHandler = undefined;
    off?.();
  }

  /**
   * The window exists: events go to it through `send`. The grant desk's requests this host took
   * before it (at its construction) are sent now: a page that stays loaded across a bridge's
   * detach and re-attach reads no new snapshot (a page still loading finds them there too).
   */
  attachWindow(send: WindowSend): void {
    this.send = send;
    for (const pending of this.pending.values()) if (pending.kind === 'grant') this.emit(EVENT_CHANNELS.grant, structuredClone(pending.view));
  }

  /** Whether a window is attached: between `attachWindow` and `pageGone` (or `close`). */
  get hasWindow(): boolean {
    return this.send !== undefined;
  }

  /**
   * The window's page reloads or navigates: its waiting approvals are denied and its questions
   * withdrawn. A plugin's capability request keeps waiting (no agent is held up by it): the next
   * page finds it in its snapshot.
   */
  windowReset(reason = 'the window was reloaded', tellPage = false): void {
    for (const [requestId, pending] of [...this.pending]) {
      if (pending.kind === 'grant') continue;
      this.pending.delete(requestId);
      // A page that stays (the bridge detached, the window open) closes its popover of it.
      if (tellPage) this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason });
      if (pending.kind === 'approval') {
        this.addEntry(pending.task, { kind: 'verdict', text: `denied ${pending.view.commandOrPath}: ${reason}`, node: pending.view.asker.agent });
        // Nobody answered it: the human loop denies it as `no-root`, never as a person's `denied`.
        pending.fail(new Error(`nobody answered: ${reason} before it was answered`));
      } else {
        this.addEntry(pending.task, { kind: 'withdrawn', text: `question withdrawn: ${reason}`, node: pending.view.asker.agent });
        pending.fail(new Error(`the question was withdrawn: ${reason} before it was answered`));
      }
    }
  }

  /**
   * There is no page to ask: it crashed or the top frame left it (electron-bridge.ts), or
   * `close()` (the window closed, the bridge taken off it). As a reset, the window told of each
   * request withdrawn (the page, or the app's own page it went to: its ids and payloads, nothing it
   * could answer), and nothing is sent, approvals denied and questions refused at once, until a
   * window is attached again (`attachWindow`: the page loaded again).
   */
  pageGone(reason = 'the window was closed'): void {
    this.windowReset(reason, true);
    this.send = undefined;
  }

  /**
   * Stops answering for the root and forgets the window; running tasks are left to `gateway.stop()`.
   * The grant desk's requests go back to it first, so the page still there is told they are withdrawn.
   */
  close(reason = 'the bridge was detached'): void {
    if (this.closed) return;
    this.closed = true;
    this.dropDesk();
    for (const off of this.rootHandlers.splice(0)) off();
    this.pageGone(reason);
    for (const off of this.unsubscribe.splice(0)) off();
  }

  // -------------------------------------------------------------------------------------------

  private async dispatch(channel: string, sender: IpcSender, payload: unknown): Promise<unknown> {
    if (!sender.isMainFrame || !this.trustedUrl(sender.url)) {
      throw new BridgeRefusal(`refused ${channel}: ${sender.refusal ?? `sender ${sender.url} is not the trusted window`}`);
    }
    if (!isInvokeChannel(channel)) throw new BridgeRefusal(`refused: unknown channel ${channel}`);
    if (this.closed) throw new BridgeRefusal(`refused ${channel}: the bridge is closed`);
    switch (channel) {
      case INVOKE_CHANNELS.gatewayInfo:
        parse(channel, payload);
        return this.gatewayInfo();
      case INVOKE_CHANNELS.listAgents:
        parse(channel, payload);
        return this.listAgents();
      case INVOKE_CHANNELS.listModules:
        parse(channel, payload);
        return this.listModules();
      case INVOKE_CHANNELS.snapshot:
        parse(channel, payload);
        return this.snapshot();
      case INVOKE_CHANNELS.startTask:
        return this.startTask(parse(channel, payload));
      case INVOKE_CHANNELS.cancelTask:
        return this.cancelTask(parse(channel, payload).taskId);
      case INVOKE_CHANNELS.answerApproval:
        return this.answerApproval(parse(channel, payload));
      case INVOKE_CHANNELS.answerQuestion:
        return this.answerQuestion(parse(channel, payload));
      case INVOKE_CHANNELS.answerGrant:
        return this.answerGrant(parse(channel, payload));
      case INVOKE_CHANNELS.postMessage: {
        const { to, text } = parse(channel, payload);
        return this.postMessage(to, text);
      }
      case INVOKE_CHANNELS.listApprovalRules:
        parse(channel, payload);
        return this.listRules();
      case INVOKE_CHANNELS.revokeApprovalRule:
        return this.revokeRule(parse(channel, payload));
    }
  }

  private emit<C extends EventChannel>(channel: C, payload: EventPayloads[C]): void {
    try {
      this.send?.(channel, payload);
    } catch (err) {
      this.log(`bridge: could not send ${channel}: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  private gatewayInfo(): InvokeResponses['chatty:gateway-info'] {
    const info: GatewayInfo = { socketPath: this.started.socketPath, tokenPath: this.started.tokenPath, runtimeDir: dirname(this.started.socketPath) };
    return info;
  }

  private async listAgents(): Promise<AgentSummary[]> {
    const agents = await this.root.listAgents();
    return agents.map((a) => ({
      name: a.name,
      displayName: a.displayName,
      description: a.description,
      skills: a.skills.map((s) => ({ name: s.name, description: s.description, examples: [...s.examples] })),
    }));
  }

  /** The loaded modules (`registry.list()`) with their tools (each handle's `listTools()`). */
  private listModules(): Promise<ModuleSummary[]> {
    return moduleSummaries(this.gateway.registry);
  }

  private snapshot(): Snapshot {
    return structuredClone({
      tasks: [...this.tasks.values()].map((t) => t.view),
      approvals: [...this.pending.values()].flatMap((p) => (p.kind === 'approval' ? [p.view] : [])),
      questions: [...this.pending.values()].flatMap((p) => (p.kind === 'question' ? [p.view] : [])),
      grants: [...this.pending.values()].flatMap((p) => (p.kind === 'grant' ? [p.view] : [])),
      pendingModules: pendingModules(this.gateway.registry),
      mailbox: this.mailbox,
      edgeRows: this.edgeRows,
      auditRows: this.auditRows,
    });
  }

  // --- tasks -----------------------------------------------------------------------------------

  private startTask({ agent, prompt }: StartTask): { taskId: string } {
    const taskId = `task-${++this.nextTask}`;
    const controller = new AbortController();
    const view: TaskView = { taskId, agent, prompt, startedAt: Date.now(), state: 'running', nodes: [], entries: [] };
    const record: TaskRecord = { view, bytes: 0, controller, settled: Promise.resolve(), tree: new TaskTree(view.nodes), admitted: new Set() };
    this.tasks.set(taskId, record);
    this.forgetOldTasks();
    this.emit(EVENT_CHANNELS.task, { type: 'started', task: structuredClone(view) });
    record.settled = this.root
      .invoke(agent, prompt, { signal: controller.signal, onProgress: (event) => this.onProgress(record, event) })
      .then(
        (result) => this.endTask(record, outcomeOf(result)),
        (err: unknown) => this.endTask(record, { state: 'failed', error: (err as Error)?.message ?? String(err) }),
      );
    return { taskId };
  }

  private onProgress(task: TaskRecord, event: ProgressEvent): void {
    if ('Admitted' in event) {
      task.admitted.add(event.Admitted);
      task.top ??= event.Admitted;
      this.addNode(task, { name: event.Admitted, role: roleOf(event.Admitted), parent: 'root' });
      this.addEntry(task, { kind: 'admitted', text: `${event.Admitted} admitted`, node: event.Admitted });
      return;
    }
    const top = task.top;
    if ('Step' in event) {
      if (top) this.placeRelayed(task, top, event.Step);
      this.addEntry(task, { kind: 'step', text: event.Step, ...(top ? { node: top } : {}) });
    } else this.addEntry(task, { kind: 'text', text: event.Text, ...(top ? { node: top } : {}) });
  }

  private endTask(task: TaskRecord, outcome: { state: Exclude<TaskState, 'running'>; error?: string }): void {
    task.view.state = outcome.state;
    // A failure's message is the worker's words, up to a frame: its view keeps a head of it, the result entry more.
    const error = outcome.error === undefined ? undefined : keptText(outcome.error, MAX_ERROR_CHARS);
    if (error !== undefined) task.view.error = error;
    const text = outcome.state === 'completed' ? 'completed' : `${outcome.state}${outcome.error !== undefined ? `: ${outcome.error}` : ''}`;
    this.addEntry(task, { kind: 'result', text });
    this.emit(EVENT_CHANNELS.task, { type: 'ended', taskId: task.view.taskId, state: outcome.state, ...(error !== undefined ? { error } : {}) });
  }

  /** Resolves once the task has ended, everything it started reaped. */
  private async cancelTask(taskId: string): Promise<{ cancelled: true }> {
    const task = this.tasks.get(taskId);
    if (!task || task.view.state !== 'running') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.cancelTask}: ${taskId} is not running`);
    task.controller.abort(new Error('cancelled from the window'));
    await task.settled;
    return { cancelled: true };
  }

  private forgetOldTasks(): void {
    const ended = [...this.tasks.values()].filter((t) => t.view.state !== 'running');
    for (const t of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_TASKS))) this.tasks.delete(t.view.taskId);
  }

  /** Draws `node` unless its name is drawn already (or, past the tree's bound, the note that says so, once). */
  private addNode(task: TaskRecord, node: TaskNode): void {
    const added = task.tree.add(node);
    if (added) this.emit(EVENT_CHANNELS.task, { type: 'node', taskId: task.view.taskId, node: { ...added } });
  }

  private addEntry(task: TaskRecord | undefined, entry: Omit<TimelineEntry, 'at'>): void {
    if (!task) return;
    // One entry is at most the task's whole budget, so the budget holds however the text comes.
    const full: TimelineEntry = { at: Date.now(), ...entry, text: keptText(entry.text, MAX_TEXT_PER_TASK) };
    task.view.entries.push(full);
    task.bytes += full.text.length;
    // What a snapshot carries stays bounded: the oldest entries go first (the window keeps what it was sent).
    while (task.view.entries.length > MAX_ENTRIES_PER_TASK || (task.bytes > MAX_TEXT_PER_TASK && task.view.entries.length > 1)) {
      task.bytes -= task.view.entries.shift()?.text.length ?? 0;
    }
    this.emit(EVENT_CHANNELS.task, { type: 'entry', taskId: task.view.taskId, entry: { ...full } });
  }

  /**
   * The task an asker works under, and its place in that task's tree, from the broker's records
   * only, never a worker's steps (any worker can say `helper-0 started`, and a top worker's relays
   * may read otherwise: the LLM worker's `helper started as helper-0`, so a spoofed step would be
   * the one match). The task of the root task the gateway vouches for (`rootTask`, once known);
   * else the task whose agent the broker admitted as this asker; else the one running task whose
   * admitted top agent has the chain's first role (a task known to be under another root task
   * than the request's is not a candidate). None of these: no task. An approval from an admitted
   * agent teaches its task's root task id. The chain's roles are then drawn under the root down to
   * the asker.
   */
  private attribute(asker: Asker, rootTask?: string): TaskRecord | undefined {
    const running = [...this.tasks.values()].filter((t) => t.view.state === 'running');
    const only = (tasks: TaskRecord[]): TaskRecord | undefined => (tasks.length === 1 ? tasks[0] : undefined);
    const byRoot = rootTask === undefined ? undefined : running.find((t) => t.rootTask === rootTask);
    const admitted = running.filter((t) => t.admitted.has(asker.agent));
    const [first, topRole] = asker.chain;
    const byTopRole =
      first !== 'root'
        ? []
        : running.filter((t) => (rootTask === undefined || t.rootTask === undefined || t.rootTask === rootTask) && t.top !== undefined && roleOf(t.top) === topRole);
    const task = byRoot ?? (admitted.length > 0 ? only(admitted) : only(byTopRole));
    if (task && rootTask !== undefined && task.rootTask === undefined && task.admitted.has(asker.agent)) task.rootTask = rootTask;
    if (task) this.placeAsker(task, asker);
    return task;
  }

  /**
   * A worker that relays its callees' progress as steps (the scripted agent does: `helper-0
   * started`, `helper-0: leaf-0 started`, each relay adding its callee's name in front) tells
   * the tree its deeper nodes: the last name started under the names before it, under `top`. A
   * step names at most the chain the broker's delegation depth allows (`relayedStart`).
   */
  private placeRelayed(task: TaskRecord, top: string, step: string): void {
    const names = relayedStart(step);
    if (!names) return;
    let parent = top;
    for (const name of names) {
      this.addNode(task, { name, role: roleOf(name), parent });
      parent = name;
    }
  }

  private placeAsker(task: TaskRecord, asker: Asker): void {
    if (task.tree.has(asker.agent)) return;
    let parent = 'root';
    const roles = asker.chain.slice(1);
    roles.forEach((role, i) => {
      if (i === roles.length - 1) {
        this.addNode(task, { name: asker.agent, role, parent });
        return;
      }
      const known = task.view.nodes.find((n) => n.parent === parent && n.role === role);
      if (known) parent = known.name;
      else {
        const placeholder = `${role} (via ${parent})`;
        this.addNode(task, { name: placeholder, role, parent });
        parent = placeholder;
      }
    });
  }

  // --- the human loop ---------------------------------------------------------------------------

  private askApproval(request: ApprovalRequest, signal: AbortSignal): ApprovalDecision | Promise<ApprovalDecision> {
    // Nobody to ask: never approved by default, and not a person's `denied` either (a handler that
    // throws is denied `by: no-root` in the audit log).
    if (!this.send || signal.aborted) throw new Error('no window is open to show the approval');
    const requestId = nextRequestId('approval');
    const task = this.attribute(request.asker, request.task);
    // The display rule decides here too: a request the page shows with code points is never remembered.
    const hidden = request.hidden || hasHidden(request.command_or_path) || hasHidden(request.diff_stat ?? '') || hasHidden(request.lands ?? '');
    const view: PendingApproval = {
      requestId,
      taskId: task?.view.taskId ?? null,
      kind: request.kind,
      commandOrPath: request.command_or_path,
      ...(request.diff_stat !== undefined ? { diffStat: request.diff_stat } : {}),
      asker: { agent: request.asker.agent, chain: [...request.asker.chain] },
      at: Date.now(),
      role: request.role,
      ...(request.task !== undefined ? { rootTask: request.task } : {}),
      ...(request.workspace !== undefined ? { workspace: request.workspace } : {}),
      ...(request.path !== undefined ? { path: request.path } : {}),
      ...(request.outside !== undefined ? { outside: request.outside } : {}),
      ...(request.lands !== undefined ? { lands: request.lands } : {}),
      hidden,
      danger: [...request.danger],
      ...(request.unsure !== undefined ? { unsure: [...request.unsure] } : {}),
      ...(request.runs !== undefined ? { runs: request.runs.map(({ program, line }) => ({ program, line })) } : {}),
      ...(request.runsMore !== undefined ? { runsMore: request.runsMore } : {}),
      proposals: hidden ? [] : structuredClone(request.proposals),
    };
    return new Promise<ApprovalDecision>((resolve, reject) => {
      this.pending.set(requestId, { kind: 'approval', view, task, settle: resolve, fail: reject });
      signal.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(requestId)) return;
          this.addEntry(task, { kind: 'withdrawn', text: `approval withdrawn: ${request.command_or_path}`, node: request.asker.agent });
          this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason: 'the asker withdrew it' });
          reject(new Error('withdrawn'));
        },
        { once: true },
      );
      this.addEntry(task, { kind: 'approval', text: `asks to ${request.kind} ${request.command_or_path}`, node: request.asker.agent });
      this.emit(EVENT_CHANNELS.approval, structuredClone(view));
    });
  }

  private askQuestion(request: QuestionToRoot, signal: AbortSignal): Promise<AnswerQuestion['answers']> {
    if (!this.send) return Promise.reject(new Error('no window is open to answer the question'));
    if (signal.aborted) return Promise.reject(new Error('withdrawn'));
    // A question the page could not answer is refused here, not shown to wait forever.
    const unanswerable = unanswerableBecause(request);
    if (unanswerable !== undefined) return Promise.reject(new Error(`the question cannot be answered: ${unanswerable}`));
    const requestId = nextRequestId('question');
    const task = this.attribute(request.asker);
    const view: PendingQuestion = {
      requestId,
      taskId: task?.view.taskId ?? null,
      questions: request.questions.map((q) => ({ id: q.id, question: q.question, options: [...q.options] })),
      asker: { agent: request.asker.agent, chain: [...request.asker.chain] },
      ...(request.origin !== undefined ? { origin: request.origin } : {}),
      at: Date.now(),
    };
    return new Promise((resolve, reject) => {
      this.pending.set(requestId, { kind: 'question', view, task, settle: resolve, fail: reject });
      signal.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(requestId)) return;
          this.addEntry(task, { kind: 'withdrawn', text: 'question withdrawn by its asker', node: request.asker.agent });
          this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason: 'the asker withdrew it' });
          reject(new Error('withdrawn'));
        },
        { once: true },
      );
      this.addEntry(task, { kind: 'question', text: `asks: ${request.questions.map((q) => q.question).join(' / ')}`, node: request.asker.agent });
      this.emit(EVENT_CHANNELS.question, structuredClone(view));
    });
  }

  private answerApproval({ requestId, verdict, remember, match }: AnswerApproval): { accepted: true } {
    const pending = this.pending.get(requestId);
    if (!pending || pending.kind !== 'approval') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerApproval}: no approval ${requestId} is waiting`);
    const view = pending.view;
    let decision: ApprovalDecision = verdict;
    if (remember !== undefined) {
      const refuse = (why: string): never => {
        throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerApproval}: ${why}`);
      };
      if (view.hidden) refuse(`${requestId} holds hidden characters: it may be approved once only`);
      if (view.proposals.length === 0) refuse(`${requestId} offers nothing to remember`);
      if (remember === 'task' && view.rootTask === undefined) refuse(`${requestId} belongs to no root task`);
      // The window would name no task (or a task the broker's records do not place it in) for a rule scoped to one.
      if (remember === 'task' && view.taskId === null) refuse(`${requestId} is shown under no task: the broker's records do not place it in one`);
      if (match !== undefined && !view.proposals.some((p) => sameMatch(p, match))) refuse(`the match is not one ${requestId} offers`);
      decision = { verdict: 'approved', remember, ...(match !== undefined ? { match } : {}) };
    }
    this.pending.delete(requestId);
    const scope = remember === undefined ? '' : ` (${remember === 'task' ? 'for this task' : 'always for this agent'}: ${describeMatch(match ?? { exact: view.commandOrPath })})`;
    this.addEntry(pending.task, { kind: 'verdict', text: `${verdict} ${view.commandOrPath}${scope}`, node: view.asker.agent });
    pending.settle(decision);
    return { accepted: true };
  }

  private answerQuestion({ requestId, answers }: AnswerQuestion): { accepted: true } {
    const pending = this.pending.get(requestId);
    if (!pending || pending.kind !== 'question') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: no question ${requestId} is waiting`);
    const asked = pending.view.questions.map((q) => q.id).sort();
    const given = answers.map((a) => a.id).sort();
    if (asked.length !== given.length || asked.some((id, i) => id !== given[i])) {
      throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: the answers must answer each of ${requestId}'s questions once`);
    }
    // `custom: false` tells the asker the person chose one of its options: it must be one, exactly.
    for (const a of answers) {
      const options = pending.view.questions.find((q) => q.id === a.id)?.options ?? [];
      if (!a.custom && !options.includes(a.answer)) {
        throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: the answer to ${a.id} is marked as a chosen option but is not one of the options of ${a.id}`);
      }
    }
    // The channel counts characters; the broker passes on only what the asker's wire may carry
    // (RootTransport.onQuestion: 16 K control characters are 96 KiB there). Refused here, the
    // question still waits and the page says why; accepted here, it was refused out of sight.
    const tooLong = checkRelayedAnswers(pending.view.questions, answers);
    if (tooLong !== undefined) throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerQuestion}: ${tooLong}: answer more briefly`);
    this.pending.delete(requestId);
    this.addEntry(pending.task, { kind: 'answer', text: `answered ${answers.map((a) => a.answer).join(' / ')}`, node: pending.view.asker.agent });
    pending.settle(answers.map((a) => ({ ...a })));
    return { accepted: true };
  }

  /**
   * A plugin's capability request, put to the window as a popover of its own kind. It waits for
   * an answer however long it takes, with no window too (the next one finds it in its snapshot):
   * nothing is granted or denied by anyone's absence. Withdrawn (the module unloaded, the registry
   * closing, this bridge closed: the desk hands it to its next handler), the popover closes.
   */
  private askGrant(request: PluginGrantRequest, signal: AbortSignal): PluginGrantDecision | Promise<PluginGrantDecision> {
    if (signal.aborted) return 'denied';
    const requestId = nextRequestId('grant');
    const view: PendingGrant = {
      requestId,
      plugin: request.plugin,
      version: request.version,
      digest: request.digest,
      digestShort: shortDigest(request.digest),
      asks: request.asks.map((ask) => ({ capability: ask.capability, detail: ask.detail, reach: askReach(ask) })),
      ...(request.dir !== undefined ? { dir: request.dir } : {}),
      at: Date.now(),
    };
    return new Promise<PluginGrantDecision>((resolve) => {
      this.pending.set(requestId, { kind: 'grant', view, settle: resolve });
      signal.addEventListener(
        'abort',
        () => {
          if (!this.pending.delete(requestId)) return;
          this.emit(EVENT_CHANNELS.withdrawn, { requestId, reason: 'the plugin no longer waits for it' });
          resolve('denied');
        },
        { once: true },
      );
      this.emit(EVENT_CHANNELS.grant, structuredClone(view));
    });
  }

  private answerGrant({ requestId, decision }: AnswerGrant): { accepted: true } {
    const pending = this.pending.get(requestId);
    if (!pending || pending.kind !== 'grant') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.answerGrant}: no capability request ${requestId} is waiting`);
    this.pending.delete(requestId);
    pending.settle(decision);
    return { accepted: true };
  }

  // --- remembered rules and the audit log ---------------------------------------------------------

  private listRules(): ApprovalRule[] {
    return structuredClone(this.approvals.list());
  }

  private revokeRule({ id }: RevokeApprovalRule): { revoked: boolean } {
    return { revoked: this.approvals.remove(id) };
  }

  private addAuditRow(row: AuditRow): void {
    this.auditRows.push(row);
    if (this.auditRows.length > MAX_AUDIT_ROWS) this.auditRows.splice(0, this.auditRows.length - MAX_AUDIT_ROWS);
    this.emit(EVENT_CHANNELS.approvalDecision, structuredClone(row));
  }

  // --- mailbox and edge log ---------------------------------------------------------------------

  private async postMessage(to: string, text: string): Promise<MailOutcome> {
    const outcome = await this.root.post(to, text);
    this.addMail({ id: `out-${++this.nextMail}`, direction: 'out', to, text, at: Date.now(), outcome: { ...outcome } });
    return outcome;
  }

  private addMail(entry: MailEntry): void {
    this.mailbox.push(entry);
    if (this.mailbox.length > MAX_MAIL) this.mailbox.splice(0, this.mailbox.length - MAX_MAIL);
    this.emit(EVENT_CHANNELS.message, { ...entry });
  }

  private addEdgeRow(row: EdgeRow): void {
    this.edgeRows.push(row);
    if (this.edgeRows.length > MAX_EDGE_ROWS) this.edgeRows.splice(0, this.edgeRows.length - MAX_EDGE_ROWS);
    this.emit(EVENT_CHANNELS.edgeRow, { ...row });
  }
}

function isInvokeChannel(channel: string): channel is InvokeChannel {
  return Object.hasOwn(InvokeRequestSchemas, channel);
}

function parse<C extends InvokeChannel>(channel: C, payload: unknown): z.infer<(typeof InvokeRequestSchemas)[C]> {
  const parsed = InvokeRequestSchemas[channel].safeParse(payload);
  if (!parsed.success) throw new BridgeRefusal(`refused ${channel}: invalid payload`);
  return parsed.data as z.infer<(typeof InvokeRequestSchemas)[C]>;
}

function sameMatch(a: ApprovalMatch, b: ApprovalMatch): boolean {
  if ('exact' in a) return 'exact' in b && a.exact === b.exact;
  if ('prefix' in a) return 'prefix' in b && a.prefix === b.prefix;
  return 'glob' in b && a.glob === b.glob;
}

/** Why the page could not answer `request` (its answers would be refused), or undefined when it can. */
function unanswerableBecause(request: QuestionToRoot): string | undefined {
  const parsed = InvokeRequestSchemas[INVOKE_CHANNELS.answerQuestion].safeParse({
    requestId: 'question-1',
    answers: request.questions.map((q) => ({ id: q.id, answer: '', custom: false })),
  });
  if (!parsed.success) {
    const n = request.questions.length;
    if (n === 0) return 'it has no question';
    if (n > ANSWER_LIMITS.questions) return `it has ${n} questions (at most ${ANSWER_LIMITS.questions})`;
    return `a question id is empty or longer than ${ANSWER_LIMITS.idChars} characters`;
  }
  if (new Set(request.questions.map((q) => q.id)).size !== request.questions.length) return 'two questions have the same id';
  return undefined;
}


/** `lead-0` → `lead`: an admitted node's name is its spec and a number. */
function roleOf(node: string): string {
  return node.replace(/-[0-9]+$/, '');
}

function outcomeOf(result: RootInvokeResult): { state: Exclude<TaskState, 'running'>; error?: string } {
  if (result.cancelled_by_user) return { state: 'cancelled', error: 'cancelled from the window' };
  if (result.success) return { state: 'completed' };
  return { state: 'failed', ...(result.error !== undefined ? { error: result.error } : {}) };
}

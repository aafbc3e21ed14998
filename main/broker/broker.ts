import { realpathSync } from 'node:fs';
import {
  CallError,
  Directory,
  ParticipantRegistry,
  type AdmittedNode,
  type CallContext,
  type CallHandler,
  type OpenConnectionOptions,
  type OpenedConnection,
  type Participant,
  type ParticipantConnection,
  type ServeOptions,
  type TaskEventListener,
  checkTaskRunSize,
  toAbortSignal,
  workerFrameCap,
} from '../fabric/admission/index.js';
import type { AbortLike } from '../jsonrpc/index.js';
import type { AgentInfo, InvokeResult, ProgressEvent, TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { ParticipantCard, SpawnContext, TaskMetadata, TaskOutcome } from '../fabric/wire/payloads.js';
import { wireError } from '../fabric/wire/wire-error.js';
import type { InvokeParams, TaskEventParams, WorkerCall } from '../fabric/wire/worker-to-broker.js';
import { checkDelegation } from './delegation.js';
import { HumanLoop, type Clarification } from './human-loop.js';
import { InFlight } from './in-flight.js';
import { LongLivedParticipants } from './long-lived.js';
import { Mailboxes, type MailboxOutcome, type RootMessage } from './mailbox.js';
import { NodeTable, ROOT, type NodeState } from './nodes.js';
import { checkRelayedAnswers } from './question-limits.js';
import { runTask } from './run-task.js';
import type { Runner, StartedWorker } from './runners/runner.js';
import { calleeSpawnContext, checkSpawnContext, deriveSpawnContext, type AgentSettings } from './spawn-context.js';
import { newTaskId } from './task-id.js';
import { MAX_TASK_TEXT_BYTES, TaskText } from './task-text.js';
import { TaskTree, type RootCall, type TaskScope } from './task-tree.js';
import { MAX_WORKERS, MAX_WORKERS_PER_TASK, WorkerSlots } from './worker-slots.js';

/** How long a cancelled task's worker has to end before it is sent SIGTERM (then SIGKILL). */
export const CANCEL_GRACE_MS = 5_000;

/** What `agent.list` says of a virtual agent (a participant's card comes from its hello). */
export type AgentCard = Omit<ParticipantCard, 'name'>;

export interface BrokerOptions {
  /** The root's own spawn context. */
  root?: {
    /** The workspace the root's callees work in (their `workspace_root` must lie inside it). */
    workspaceRoot?: string | undefined;
    baseBranch?: string | undefined;
    /** Whom the root may call (roles or node names); default: every published agent. */
    roster?: readonly string[] | undefined;
  };
  /** Per agent (by role): the `verification` command and `endpoint` its contexts carry. */
  agents?: Record<string, AgentSettings>;
  /** How long a cancelled task's worker has to end before SIGTERM, then as long again before SIGKILL. */
  cancelGraceMs?: number;
  /**
   * What the broker keeps of one task's text for its result's `response` (UTF-8 bytes, default
   * 4 MiB): past it, the head and the tail, with a line counting what was cut between them, and
   * `metadata.responseCutBytes`. Progress still streams every chunk to a reading caller.
   */
  maxTaskTextBytes?: number;
  /**
   * Fan-out caps: task workers (virtual agents' workers, from the start of their runner until
   * they are reaped) live at once in the whole broker (default 16) and under one root task, that
   * is one tree (default 8). A call past either is refused at once (`refused`, naming the cap),
   * never queued. Long-lived participants are not counted: the embedder opens them.
   */
  maxWorkers?: number;
  maxWorkersPerTask?: number;
  /** How every worker connection is served (hello timeout, limits); the call handler is the broker's. */
  serve?: Omit<ServeOptions, 'calls'>;
  log?: (message: string) => void;
}

/** An agent with no settings of its own (read only: one object for all). */
const NO_SETTINGS: AgentSettings = Object.freeze({});

/** An `agent.invoke`'s callee once the call is allowed, and what its caller acts as. */
interface Callee {
  participant: Participant | undefined;
  virtual: VirtualAgent | undefined;
  role: string;
  scope: NodeState;
  several: NodeState[] | undefined;
  settings: AgentSettings;
}

interface VirtualAgent {
  name: string;
  runner: Runner;
  card: AgentCard;
}

/**
 * Where a call's progress goes. A worker caller's sink resolves once the event is queued for it:
 * returned from a task event listener, that holds the callee's reading while the caller's queue
 * is full (the back-pressure that bounds what a non-reading caller costs).
 */
type ProgressSink = (event: ProgressEvent) => Promise<void> | undefined | void;

/** What a worker caller's call is answered through (the root's calls have none). */
type CallerSide = Pick<CallContext, 'answerNow'>;

/** The root's result: the wire's, and when a question could not be carried back, that question. */
export type RootInvokeResult = Omit<InvokeResult, 'metadata'> & {
  metadata?: NonNullable<InvokeResult['metadata']> & { clarification?: Clarification };
};

/**
 * The broker: routes work between the root, long-lived participants and virtual agents. Every
 * worker connection it makes is served by its call handler, each call run as the node the
 * connection names: `agent.invoke` (a task on another agent, under the chain rules and the spawn
 * context rules), `agent.list`, `mailbox.post`. A virtual agent gets one fresh worker per task,
 * started by its runner and reaped when the task ends; cancelling a call cancels the task it
 * started and, through that worker's own calls, everything under it. Only long-lived participants
 * and virtual agents are roles (called, listed, on rosters); a virtual agent's worker is not. A
 * long-lived participant's calls act within the task it runs (see `TaskTree.acting`).
 */
export class Broker {
  readonly directory = new Directory();
  readonly registry = new ParticipantRegistry();
  private readonly nodes = new NodeTable();
  private readonly mail: Mailboxes;
  private readonly virtuals = new Map<string, VirtualAgent>();
  /** The long-lived participants, from spawn to exit. */
  private readonly longLived: LongLivedParticipants;
  /** Root calls, trees, the tasks participants run: what each node's calls act as. */
  private readonly tree = new TaskTree();
  /** Invocations in flight, by the node that made them. */
  private readonly inflight = new InFlight();
  /** Approvals and questions: only the root answers an approval; a question climbs the caller chain. */
  readonly human: HumanLoop;
  private readonly graceMs: number;
  private readonly maxTaskTextBytes: number;
  private readonly slots: WorkerSlots;
  private readonly log: (message: string) => void;
  private stopping: Promise<void> | undefined;
  /** Aborted when `stop()` begins: a task worker's release then has a grace, not git's whole time limit (see `StartedWorker.stop`). */
  private readonly stopSignal = new AbortController();

  /** The root's workspace (`root.workspaceRoot`) as a real path: where the agents' workspaces come from. */
  readonly workspaceRoot: string | undefined;

  constructor(private readonly options: BrokerOptions = {}) {
    // Compared as a canonical real path by the spawn-context rules: resolved once, here.
    this.workspaceRoot = options.root?.workspaceRoot === undefined ? undefined : realpathSync(options.root.workspaceRoot);
    this.graceMs = options.cancelGraceMs ?? CANCEL_GRACE_MS;
    this.maxTaskTextBytes = positiveInteger('maxTaskTextBytes', options.maxTaskTextBytes ?? MAX_TASK_TEXT_BYTES);
    this.slots = new WorkerSlots(positiveInteger('maxWorkers', options.maxWorkers ?? MAX_WORKERS), positiveInteger('maxWorkersPerTask', options.maxWorkersPerTask ?? MAX_WORKERS_PER_TASK));
    this.log = options.log ?? ((message) => console.warn(`broker: ${message}`));
    this.longLived = new LongLivedParticipants({ graceMs: this.graceMs, stopping: () => this.stopping !== undefined, ended: (name) => this.ended(name) });
    this.mail = new Mailboxes(
      (name) => {
        const node = this.nodes.get(name);
        return node && this.tree.acting(node).scope;
      },
      (name) => this.hasEnded(name),
    );
    this.human = new HumanLoop({
      relay: async (worker, question, request, signal) => {
        const participant = this.registry.get(worker);
        if (!participant) throw new CallError(wireError({ kind: 'disconnected', reason: `${worker} is gone` }));
        const reply = await participant.connection.request('human.ask', { question, request }, signal);
        // What a worker answers is held to what a person may answer (see `checkRelayedAnswers`).
        const wrong = reply === 'escalate' ? undefined : checkRelayedAnswers(request.questions, reply.answers);
        if (wrong !== undefined) throw new CallError(wireError({ kind: 'failed', reason: `${worker}'s answer was refused: ${wrong}` }));
        return reply;
      },
      present: (worker) => this.nodes.get(worker) !== undefined && this.registry.get(worker) !== undefined,
      clarify: (asker, request) => this.tree.clarify(asker, request),
      rootTask: (node) => this.tree.rootTaskOf(node),
    }, this.log);
    this.nodes.add({ name: ROOT, kind: 'root', role: ROOT, chain: [ROOT], otherChains: [], spawnContext: { roster: [] }, roster: undefined, callers: [], tree: ROOT });
    this.registry.on('deregistered', (participant) => this.ended(participant.node.name));
  }

  /** Serves every worker connection the broker makes. */
  readonly calls: CallHandler = (call, context) => this.onCall(call, context);

  /** Publishes a virtual agent: a factory that starts one worker per task through `runner`. */
  addVirtualAgent(name: string, runner: Runner, card: Partial<AgentCard> = {}): void {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || name === ROOT) throw new Error(`broker: '${name}' is not a usable agent name`);
    if (this.virtuals.has(name)) throw new Error(`broker: a virtual agent named '${name}' is already published`);
    this.virtuals.set(name, {
      name,
      runner,
      card: { description: card.description ?? '', version: card.version ?? '0.0.0', skills: card.skills ?? [], ...(card.display_name ? { display_name: card.display_name } : {}) },
    });
  }

  /**
   * Spawns a long-lived worker on fd 3, registered as `<spec>-<n>` and reachable by that name for
   * as long as its connection lasts. Acting as itself, its chain is `["root", spec]` and its
   * context is derived from the root's; while it runs a task, its calls act within that task.
   * Called while the broker stops (or finishing after `stop()` began), its child is ended and it rejects.
   */
  openParticipant(spec: string, command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<OpenedConnection> {
    if (this.stopping) return Promise.reject(new Error('broker: stopping'));
    const root = this.rootNode();
    let node: AdmittedNode;
    try {
      node = this.directory.admit(spec);
    } catch (err) {
      return Promise.reject(err); // a spec it cannot admit: refused as the open's failure, like every other
    }
    const spawnContext = deriveSpawnContext(root.spawnContext, this.settings(spec));
    this.nodes.add({ name: node.name, kind: 'participant', role: spec, chain: [ROOT, spec], otherChains: [], spawnContext, roster: spawnContext.roster, callers: [], tree: node.name });
    return this.longLived.open(node, command, args, { ...this.connectionOptions(node.name), cwd: options.cwd, env: options.env });
  }

  /** What every worker connection the broker makes is opened with (`name` for its log lines). */
  private connectionOptions(name: string): OpenConnectionOptions {
    return { log: (message) => this.log(`${name}: ${message}`), ...this.options.serve, directory: this.directory, registry: this.registry, calls: this.calls };
  }

  /** Every role, as `agent.list` answers it: participants by admitted name, then virtual agents. */
  listAgents(): AgentInfo[] {
    const participants = this.participants().map((p: Participant): AgentInfo => ({
      name: p.node.name,
      displayName: p.card.display_name ?? p.node.name,
      description: p.card.description,
      version: p.card.version,
      skills: p.card.skills,
      capabilities: { streaming: true },
      origin: 'participant',
    }));
    const virtuals = [...this.virtuals.values()].map((v): AgentInfo => ({
      name: v.name,
      displayName: v.card.display_name ?? v.name,
      description: v.card.description,
      version: v.card.version,
      skills: v.card.skills,
      capabilities: { streaming: true },
      origin: 'virtual',
    }));
    return [...participants, ...virtuals];
  }

  /**
   * Whether `name` must not be served over HTTP: a role (a virtual agent, a long-lived
   * participant) or any other live node of this broker (a virtual agent's worker is no role, but
   * it is a local participant all the same).
   */
  isRole(name: string): boolean {
    return this.virtuals.has(name) || this.registry.get(name) !== undefined;
  }

  /** The long-lived participants registered now, in registration order. */
  private participants(): Participant[] {
    return this.registry.list().filter((p) => this.longLived.has(p.node.name));
  }

  /** A long-lived participant by its admitted name (a virtual agent's worker is not one). */
  private participant(name: string): Participant | undefined {
    return this.longLived.has(name) ? this.registry.get(name) : undefined;
  }

  /** Whether a local participant (long-lived or a virtual agent's worker) is running the task with this id right now. */
  ownsTask(taskId: string): boolean {
    return this.tree.ownsTask(taskId);
  }

  /** The root's call: as a worker's `agent.invoke`, with the root as the caller. Rejects with `CallError`. */
  async invokeFromRoot(agent: string, prompt: string, options: { spawnContext?: SpawnContext; onProgress?: ProgressSink; signal?: AbortSignal } = {}): Promise<RootInvokeResult> {
    const call = this.tree.beginRootCall();
    const abort = (): void => call.controller.abort(options.signal?.reason);
    if (options.signal?.aborted) abort();
    else options.signal?.addEventListener('abort', abort, { once: true });
    const progress: ProgressSink = (event) => {
      try {
        options.onProgress?.(event);
      } catch (err) {
        this.log(`the root's onProgress threw: ${(err as Error)?.message ?? String(err)}`);
      }
    };
    try {
      const params: InvokeParams = { agent, prompt, handle: null, include_trace: false, ...(options.spawnContext ? { spawn_context: options.spawnContext } : {}) };
      const result: RootInvokeResult = await this.inflight.track(ROOT, this.invoke(this.rootNode(), params, progress, call.controller.signal, call));
      const clarification = call.clarification;
      if (!clarification) return result;
      // A caller that cannot carry a question back fails the task, quoting it; nobody guesses an answer.
      const quoted = clarification.questions.map((q) => JSON.stringify(q.question)).join(', ');
      return {
        ...result,
        success: false,
        error: `${clarification.asker.agent} asked ${quoted} and this call has no question handler to answer it`,
        // The worker's later outcome added nothing (see `decided`); a cut made before stays said.
        metadata: { ...(result.metadata ?? {}), clarification },
        cancelled_by_user: false,
      };
    } finally {
      for (const tree of this.tree.endRootCall(call)) this.human.rootTaskEnded(tree);
      options.signal?.removeEventListener('abort', abort);
    }
  }

  /** The root's `mailbox.post`. */
  postFromRoot(to: string, text: string): MailboxOutcome {
    return this.mail.post(this.rootNode(), to, text);
  }

  onRootMessage(listener: (message: RootMessage) => void): () => void {
    return this.mail.onRootMessage(listener);
  }

  /**
   * Cancels every task and call in flight and reaps every child the broker started (long-lived
   * participants, those still being opened, every task's worker); resolves once nothing is left.
   */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    let begin!: () => void;
    this.stopping = new Promise<void>((resolve) => (begin = resolve)).then(async () => {
      this.stopSignal.abort(new Error('the broker is stopping'));
      this.tree.abortRootCalls(new Error('the broker is stopping'));
      const closing = this.longLived.close();
      await this.inflight.allSettled();
      await closing;
      await this.longLived.reap();
    });
    begin(); // `stopping` is set before anything it does can look at it
    return this.stopping;
  }

  private rootNode(): NodeState {
    const root = this.nodes.get(ROOT)!;
    const configured = this.options.root;
    root.spawnContext = {
      ...(this.workspaceRoot !== undefined ? { workspace_root: this.workspaceRoot } : {}),
      ...(configured?.baseBranch !== undefined ? { base_branch: configured.baseBranch } : {}),
      roster: [...(configured?.roster ?? this.publishedNames())],
    };
    root.roster = configured?.roster;
    return root;
  }

  private publishedNames(): string[] {
    const names = new Set<string>(this.virtuals.keys());
    for (const p of this.participants()) {
      names.add(p.node.spec);
      names.add(p.node.name);
    }
    return [...names];
  }

  private settings(role: string): AgentSettings {
    return this.options.agents?.[role] ?? NO_SETTINGS;
  }

  /**
   * A node has ended: nothing of it is kept. Names are never reused, so a node kept (to tell mail
   * `recipient_ended` from `not_on_tree`) cost ~470 bytes per task for the broker's life; the
   * directory that handed the name out tells an ended name now (`hasEnded`). So a node is live
   * exactly while the node table holds it.
   */
  private ended(name: string): void {
    this.nodes.delete(name);
    this.mail.forget(name);
    this.tree.forget(name);
    this.inflight.forget(name);
  }

  /** Whether `name` is a node of this broker that has ended (admitted once, no longer known). */
  private hasEnded(name: string): boolean {
    return this.nodes.get(name) === undefined && this.directory.admitted(name);
  }

  /** Not `async`: an `agent.invoke` is handed its promise as it is (an async function returning a promise costs extra turns of the microtask queue per call). */
  private onCall(call: WorkerCall, context: CallContext): Promise<unknown> {
    const node = this.nodes.get(context.node.name);
    if (!node) {
      const reason = this.hasEnded(context.node.name) ? `${context.node.name} has ended` : `${context.node.name} is not a node of this broker`;
      return Promise.reject(new CallError(wireError({ kind: 'refused', reason })));
    }
    if (call.method === 'agent.invoke') return this.inflight.track(node.name, this.invoke(node, call.params, context.progress, context.abort, undefined, context));
    if (call.method === 'agent.list' || call.method === 'mailbox.post') return answerInThisTurn(context, this.callAnsweredInTurn(node, call));
    return this.callAnsweredLater(node, call, context);
  }

  /** The calls whose answer is ready in the turn they are read (see `answerInThisTurn`). */
  private callAnsweredInTurn(node: NodeState, call: Extract<WorkerCall, { method: 'agent.list' | 'mailbox.post' }>): unknown {
    if (call.method === 'agent.list') return this.listAgents();
    return this.mail.post(this.tree.acting(node).scope, call.params.to, call.params.text);
  }

  /** The calls whose answer comes later (a person's decision): answered when the handler's promise settles. */
  private async callAnsweredLater(node: NodeState, call: Extract<WorkerCall, { method: 'human.approve' | 'human.ask' }>, context: CallContext): Promise<unknown> {
    switch (call.method) {
      case 'human.approve':
        return this.human.approve(this.tree.acting(node).scope, call.params, context.signal);
      case 'human.ask': {
        const { scope, several } = this.tree.acting(node);
        if (several) {
          const reason = `${node.name} is running ${several.length} tasks at once: its question cannot be carried to the caller of one of them`;
          throw new CallError(wireError({ kind: 'refused', reason }));
        }
        return this.human.ask(scope, call.params, context.signal);
      }
    }
  }

  /**
   * `agent.invoke` from `caller` (acting as `acting` says): checks, then one task on the callee;
   * resolves the wire's result shape. A participant running several tasks may call only what it
   * could call within each of them, and its callee's context must suit each of them.
   *
   * Not `async`: a call that brings no spawn context is checked and its task sent in this turn, and
   * a participant's task makes the result in the turn its answer is read (see `runTask`): a
   * worker's call (`answer`, its context) is answered in that turn, right behind the callee's last
   * event, and the returned promise resolves with the same result.
   */
  private invoke(caller: NodeState, params: InvokeParams, progress: ProgressSink, signal: AbortLike, rootCall?: RootCall, answer?: CallerSide): Promise<InvokeResult> {
    let callee: Callee;
    try {
      callee = this.callee(caller, params);
    } catch (err) {
      return Promise.reject(err);
    }
    if (params.spawn_context === undefined && !callee.several) {
      // A call that brings no context gets the caller's, derived at once (no file system, no await).
      return this.startInvoke(caller, params, callee, deriveSpawnContext(callee.scope.spawnContext, callee.settings), progress, signal, rootCall, answer);
    }
    return this.checkedSpawnContext(params, callee).then((spawnContext) => this.startInvoke(caller, params, callee, spawnContext, progress, signal, rootCall, answer));
  }

  /** Who `params.agent` is and what `caller` acts as, once the call is allowed (else throws `CallError`). */
  private callee(caller: NodeState, params: InvokeParams): Callee {
    if (this.stopping) throw new CallError(wireError({ kind: 'refused', reason: 'the broker is stopping' }));
    const participant = this.participant(params.agent);
    const virtual = participant ? undefined : this.virtuals.get(params.agent);
    if (!participant && !virtual) throw new CallError(wireError({ kind: 'unknown_agent', agent: params.agent }));
    const role = participant ? participant.node.spec : virtual!.name;
    const { scope, several } = this.tree.acting(caller);
    if (several) for (const within of several) delegationCheck(within, params.agent, role);
    else delegationCheck(scope, params.agent, role);
    return { participant, virtual, role, scope, several, settings: this.settings(role) };
  }

  /** The callee's spawn context when the call brings one or its caller runs several tasks: checked against each (real paths). */
  private async checkedSpawnContext(params: InvokeParams, callee: Callee): Promise<SpawnContext> {
    const { scope, several, settings } = callee;
    const spawnContext = params.spawn_context === undefined ? deriveSpawnContext(scope.spawnContext, settings) : await checkSpawnContext(params.spawn_context, scope.spawnContext, settings);
    if (several) for (const within of several) await calleeSpawnContext(spawnContext, within.spawnContext, settings);
    return spawnContext;
  }

  /** The checked call's task: placed, started on the callee, and its outcome made the wire's result. */
  private startInvoke(
    caller: NodeState,
    params: InvokeParams,
    callee: Callee,
    spawnContext: SpawnContext,
    progress: ProgressSink,
    signal: AbortLike,
    rootCall: RootCall | undefined,
    answer: CallerSide | undefined,
  ): Promise<InvokeResult> {
    const { participant, virtual } = callee;
    const task: TaskRunParams = { taskId: newTaskId(), text: params.prompt, spawnContext };
    const placed = this.tree.place(callee.scope, callee.role, task.taskId, spawnContext);
    let releaseSlot: (() => void) | undefined;
    try {
      // A virtual agent's task.run must fit its worker's cap, and the worker takes its slot now, or the
      // call is refused before anything is started (the participant path's codec measures its own line).
      if (virtual) {
        checkTaskRunSize(task, virtual.name, workerFrameCap(this.options.serve));
        releaseSlot = this.slots.take(placed.tree);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (rootCall) this.tree.claim(placed.tree, rootCall);
    const text = new TaskText(this.maxTaskTextBytes);
    const onEvent = (event: TaskEventParams): Promise<void> | undefined | void => {
      if (event.kind === 'status') return progress({ Step: event.message ?? event.state });
      if (!decided(rootCall)) text.append(event.text);
      return progress({ Text: event.text });
    };
    if (participant) {
      const name = participant.node.name;
      const served = this.tree.serve(name, placed);
      return new Promise<InvokeResult>((resolve, reject) => {
        // Said once the callee's task.run is on its way: the callee's frame is the urgent one.
        const sent = (): void => void progress({ Admitted: name });
        try {
          this.runTask(participant.connection, task, onEvent, signal, (outcome) => {
            served();
            // A closed connection hands out its outcomes in turn (`ParticipantConnection.close`): its
            // list, still holding tasks when the node ended, goes with the last of them.
            if (!participant.connection.isOpen) this.tree.forget(name);
            const result = this.invokeResult(caller, text, outcome, signal, rootCall);
            resolve(result);
            // An answer waiting for room (a caller that stopped reading) holds the participant's reading.
            return answer?.answerNow(result);
          }, sent);
        } catch (err) {
          served(); // the task never went out: the participant does not run it
          reject(err);
        }
      });
    }
    return this.runVirtual(virtual!, placed, task, onEvent, progress, toAbortSignal(signal)).then(
      (outcome) => {
        // Once the worker and everything it started are reaped, and its answer is queued for its
        // caller: an answer waiting for room (a caller that stopped reading) keeps the slot, so
        // what waits for non-reading callers is bounded by the worker caps, as a participant's is.
        const result = this.invokeResult(caller, text, outcome, signal, rootCall);
        const queued = answer?.answerNow(result);
        if (queued) queued.then(releaseSlot!, releaseSlot!);
        else releaseSlot!();
        return result;
      },
      (err: unknown) => {
        releaseSlot!();
        throw err;
      },
    );
  }

  /** A task's outcome as the wire's result of the call that started it. */
  private invokeResult(caller: NodeState, text: TaskText, outcome: TaskOutcome, signal: AbortLike, rootCall: RootCall | undefined): InvokeResult {
    const result: InvokeResult = {
      success: outcome.state === 'completed',
      response: text.toString(),
      messages: this.mail.drain(caller.name),
      cancelled_by_user: signal.aborted,
    };
    if (outcome.state !== 'completed') result.error = outcome.message ?? `the task ended ${outcome.state}`;
    // What the callee says of the cut is ignored: only the broker knows what it kept.
    const told = decided(rootCall) ? undefined : outcome.metadata;
    if (told === undefined && text.cut === 0) return result;
    const metadata: TaskMetadata = { ...told };
    delete metadata.responseCutBytes;
    if (text.cut > 0) metadata.responseCutBytes = text.cut;
    if (Object.keys(metadata).length > 0) result.metadata = metadata;
    return result;
  }

  /**
   * Runs one task on a local participant's connection (see `runTask`); `done` gets its outcome in
   * the turn it ends. The task is the participant's meanwhile (`ownsTask`): no longer once `done` runs.
   */
  private runTask(connection: ParticipantConnection, params: TaskRunParams, onEvent: TaskEventListener, signal: AbortLike, done: (outcome: TaskOutcome) => void | Promise<void>, sent?: () => void): void {
    const owned = this.tree.taskRunning(params.taskId);
    try {
      runTask(connection, params, onEvent, signal, this.graceMs, (outcome) => {
        owned();
        return done(outcome);
      }, sent);
    } catch (err) {
      owned(); // a task.run that could not be sent (see `runTask`) is nobody's
      throw err;
    }
  }

  /** One task on a fresh worker of a virtual agent: admitted, started, run, reaped (with everything it started). */
  private async runVirtual(
    agent: VirtualAgent,
    placed: TaskScope,
    params: TaskRunParams,
    onEvent: TaskEventListener,
    progress: ProgressSink,
    signal: AbortSignal,
  ): Promise<TaskOutcome> {
    const spawnContext = params.spawnContext ?? { roster: [] };
    let admitted: NodeState | undefined;
    let worker: StartedWorker;
    try {
      worker = await agent.runner.start({
        spec: agent.name,
        spawnContext,
        signal,
        stopping: this.stopSignal.signal,
        connection: this.connectionOptions(`${agent.name}'s worker`),
        onAdmitted: (node) => {
          admitted = { name: node.name, kind: 'worker', role: agent.name, ...placed, spawnContext, roster: spawnContext.roster };
          this.nodes.add(admitted);
          void progress({ Admitted: node.name });
        },
      });
    } catch (err) {
      if (admitted) this.ended(admitted.name);
      if (signal.aborted) return { state: 'canceled', message: `cancelled before ${agent.name}'s worker had started` };
      return { state: 'failed', message: `${agent.name}: could not start its worker: ${(err as Error)?.message ?? String(err)}` };
    }
    const node = admitted ?? this.nodes.get(worker.node.name);
    if (node) {
      node.spawnContext = worker.spawnContext;
      node.roster = worker.spawnContext.roster;
    }
    try {
      return await new Promise<TaskOutcome>((resolve) => this.runTask(worker.connection, { ...params, spawnContext: worker.spawnContext }, onEvent, signal, resolve));
    } finally {
      await worker.stop(this.graceMs, this.stopSignal.signal).catch((err: unknown) => this.log(`stopping ${worker.node.name}: ${(err as Error)?.message ?? String(err)}`));
      this.ended(worker.node.name);
      // What the worker started is being cancelled (its connection is gone): wait until it is reaped too.
      await this.inflight.settled(worker.node.name);
    }
  }
}

/**
 * Answers a call whose result is ready now in this turn (`answerNow`), and returns it as the
 * handler's promise (then ignored). Answered a promise turn later, every call of one read was run
 * before any answer was made, so the connection's pause at an answer waiting for room (a caller
 * that stopped reading) came after the whole read: 32 `agent.list` calls in one write made 32
 * answers, each a copy of every participant's card (a card may be up to a frame), 31 of them
 * waiting. Answered now, the connection stops at the first that waits and keeps the rest unread.
 */
function answerInThisTurn(context: CallContext, result: unknown): Promise<unknown> {
  void context.answerNow(result);
  return Promise.resolve(result);
}

/** A root call's outcome is decided once it has failed with a question (see `TaskTree.clarify`): from then on nothing the callee says joins its result. */
function decided(rootCall: RootCall | undefined): boolean {
  return rootCall?.clarification !== undefined;
}

/** The delegation rules for a call made as `within` to `agent` (of `role`): throws `CallError` when they refuse it. */
function delegationCheck(within: NodeState, agent: string, role: string): void {
  checkDelegation({ name: within.name, chain: within.chain, otherChains: within.otherChains, roster: within.kind === 'root' ? within.roster : within.roster ?? [] }, { name: agent, role });
}

function positiveInteger(option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`broker: ${option} must be a positive integer, not ${String(value)}`);
  return value;
}

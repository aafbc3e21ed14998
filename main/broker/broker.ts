import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import {
  CallError,
  Directory,
  ParticipantRegistry,
  openConnection,
  type CallContext,
  type CallHandler,
  type OpenedConnection,
  type Participant,
  type ParticipantConnection,
  type RunningTask,
  type ServeOptions,
  type TaskEventListener,
} from '../fabric/admission/index.js';
import type { AgentInfo, InvokeResult, ProgressEvent, TaskRunParams } from '../fabric/wire/broker-to-worker.js';
import type { ParticipantCard, SpawnContext, TaskMetadata, TaskOutcome } from '../fabric/wire/payloads.js';
import { wireError } from '../fabric/wire/wire-error.js';
import type { InvokeParams, TaskEventParams, WorkerCall } from '../fabric/wire/worker-to-broker.js';
import { checkDelegation } from './delegation.js';
import { HumanLoop, type Clarification } from './human-loop.js';
import { Mailboxes, type MailboxOutcome, type RootMessage } from './mailbox.js';
import { NodeTable, ROOT, type NodeState } from './nodes.js';
import { endChild, exitOf } from './runners/end-child.js';
import type { Runner, StartedWorker } from './runners/runner.js';
import { calleeSpawnContext, deriveSpawnContext, type AgentSettings } from './spawn-context.js';
import { MAX_TASK_TEXT_BYTES, TaskText } from './task-text.js';
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

interface VirtualAgent {
  name: string;
  runner: Runner;
  card: AgentCard;
}

/**
 * Where a node works within one task: for a virtual agent's worker, for its life; for a long-lived
 * participant, while it runs that task.
 */
interface TaskScope {
  chain: string[];
  otherChains: string[][];
  callers: string[];
  tree: string;
  spawnContext: SpawnContext;
}

/**
 * Where a call's progress goes. A worker caller's sink resolves once the event is queued for it:
 * returned from a task event listener, that holds the callee's reading while the caller's queue
 * is full (the back-pressure that bounds what a non-reading caller costs).
 */
type ProgressSink = (event: ProgressEvent) => void | Promise<void>;

/** The root's result: the wire's, and when a question could not be carried back, that question. */
export type RootInvokeResult = Omit<InvokeResult, 'metadata'> & {
  metadata?: NonNullable<InvokeResult['metadata']> & { clarification?: Clarification };
};

/** One call the root made: how to end it, and why it was ended. */
interface RootCall {
  controller: AbortController;
  clarification: Clarification | undefined;
}

/**
 * The broker: routes work between the root, long-lived participants and virtual agents. Every
 * worker connection it makes is served by its call handler, each call run as the node the
 * connection names: `agent.invoke` (a task on another agent, under the chain rules and the spawn
 * context rules), `agent.list`, `mailbox.post`. A virtual agent gets one fresh worker per task,
 * started by its runner and reaped when the task ends; cancelling a call cancels the task it
 * started and, through that worker's own calls, everything under it. Only long-lived participants
 * and virtual agents are roles (called, listed, on rosters); a virtual agent's worker is not. A
 * long-lived participant's calls act within the task it runs (see `acting`).
 */
export class Broker {
  readonly directory = new Directory();
  readonly registry = new ParticipantRegistry();
  private readonly nodes = new NodeTable();
  private readonly mail: Mailboxes;
  private readonly virtuals = new Map<string, VirtualAgent>();
  /** The long-lived participants' connections and children, by node name, until each child has exited. */
  private readonly longLived = new Map<string, OpenedConnection>();
  /**
   * `openParticipant` calls not yet settled, and the children they spawned so far, each with how to
   * cut its call short: `stop()` ends those children, waits for their exit (not for their stdio to
   * close, which a process of theirs may hold), then ends the calls.
   */
  private readonly opening = new Set<Promise<unknown>>();
  private readonly spawning = new Map<ChildProcess, (reason: Error) => void>();
  /** Every long-lived participant's connection not yet closed, listed or not: `stop()` closes them all. */
  private readonly made = new Set<ParticipantConnection>();
  /** The tasks each long-lived participant runs (`task.run` sent, no outcome yet): where it works in each. */
  private readonly serving = new Map<string, Map<string, TaskScope>>();
  /** Invocations in flight, by the node that made them: a node's worker is reaped only after all of its own have settled. */
  private readonly inflight = new Map<string, Set<Promise<unknown>>>();
  private readonly rootCalls = new Set<AbortController>();
  /** The root call each tree was started by (a tree is named after that call's task id). */
  private readonly rootTrees = new Map<string, RootCall>();
  /** The ids of the tasks local participants are running (`task.run` sent, no outcome yet). */
  private readonly liveTasks = new Set<string>();
  /** Approvals and questions: only the root answers an approval; a question climbs the caller chain. */
  readonly human: HumanLoop;
  private readonly graceMs: number;
  private readonly maxTaskTextBytes: number;
  private readonly slots: WorkerSlots;
  private readonly log: (message: string) => void;
  private stopping: Promise<void> | undefined;

  private readonly rootWorkspace: string | undefined;

  constructor(private readonly options: BrokerOptions = {}) {
    // Compared as a canonical real path by the spawn-context rules: resolved once, here.
    this.rootWorkspace = options.root?.workspaceRoot === undefined ? undefined : realpathSync(options.root.workspaceRoot);
    this.graceMs = options.cancelGraceMs ?? CANCEL_GRACE_MS;
    this.maxTaskTextBytes = positiveInteger('maxTaskTextBytes', options.maxTaskTextBytes ?? MAX_TASK_TEXT_BYTES);
    this.slots = new WorkerSlots(positiveInteger('maxWorkers', options.maxWorkers ?? MAX_WORKERS), positiveInteger('maxWorkersPerTask', options.maxWorkersPerTask ?? MAX_WORKERS_PER_TASK));
    this.log = options.log ?? ((message) => console.warn(`broker: ${message}`));
    this.mail = new Mailboxes((name) => {
      const node = this.nodes.get(name);
      return node && this.acting(node).scope;
    });
    this.human = new HumanLoop({
      relay: async (worker, question, request, signal) => {
        const participant = this.registry.get(worker);
        if (!participant) throw new CallError(wireError({ kind: 'disconnected', reason: `${worker} is gone` }));
        return participant.connection.request('human.ask', { question, request }, signal);
      },
      present: (worker) => this.nodes.get(worker)?.ended === false && this.registry.get(worker) !== undefined,
      clarify: (asker, request) => {
        const call = this.rootTrees.get(asker.tree);
        if (!call || call.controller.signal.aborted) return false;
        if (call.clarification) return true; // the first question is the one the root call quotes
        call.clarification = request;
        // The tree is cancelled once the asker's human.ask has its error (thrown by our caller, and
        // written this turn): cancelled first, the worker would withdraw a question already answered.
        setImmediate(() => call.controller.abort(new Error('a question no one can answer')));
        return true;
      },
      rootTask: (node) => (this.rootTrees.has(node.tree) ? node.tree : undefined),
    }, this.log);
    this.nodes.add({ name: ROOT, kind: 'root', role: ROOT, chain: [ROOT], otherChains: [], spawnContext: { roster: [] }, roster: undefined, callers: [], tree: ROOT, ended: false });
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
    const opening = this.open(spec, command, args, options);
    this.opening.add(opening);
    void opening.catch(() => {}).finally(() => this.opening.delete(opening));
    return opening;
  }

  private async open(spec: string, command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<OpenedConnection> {
    const root = this.rootNode();
    const node = this.directory.admit(spec);
    const spawnContext = deriveSpawnContext(root.spawnContext, this.settings(spec));
    this.nodes.add({ name: node.name, kind: 'participant', role: spec, chain: [ROOT, spec], otherChains: [], spawnContext, roster: spawnContext.roster, callers: [], tree: node.name, ended: false });
    let child: ChildProcess | undefined;
    let cutShort!: (reason: Error) => void;
    const stopped = new Promise<never>((_, reject) => (cutShort = reject));
    let opened: OpenedConnection;
    try {
      const connecting = openConnection(spec, command, args, {
        log: (message) => this.log(`${node.name}: ${message}`),
        ...this.options.serve,
        directory: this.directory,
        registry: this.registry,
        calls: this.calls,
        node,
        cwd: options.cwd,
        env: options.env,
        onSpawn: (c) => {
          child = c;
          c.stdout?.resume();
          this.spawning.set(c, cutShort);
          if (this.stopping) void endChild(c, this.graceMs).then(() => cutShort(new Error('broker: stopping')));
        },
      });
      opened = await Promise.race([connecting, stopped]).catch((err: unknown) => {
        // Cut short by stop(): `connecting` settles on its own later (once the child's stdio has closed).
        void connecting.then((late) => late.connection.close('the broker is stopping'), () => {});
        throw err;
      });
    } catch (err) {
      this.ended(node.name);
      throw err;
    } finally {
      if (child) this.spawning.delete(child);
    }
    if (this.stopping) {
      // It said hello while the broker was stopping: nobody will close it later.
      opened.connection.close('the broker is stopping');
      await endChild(opened.child, this.graceMs);
      this.ended(node.name);
      throw new Error('broker: stopping');
    }
    this.longLived.set(node.name, opened);
    this.made.add(opened.connection);
    void opened.connection.closed.then(() => {
      this.made.delete(opened.connection);
      this.ended(node.name);
    });
    // Kept until its child has exited (not merely its connection closed): stop() reaps one that ignores SIGTERM.
    // Once it has exited, a process of its own may still hold fd 3: the connection goes with the
    // child (its calls cancelled), so nothing the broker no longer lists can call or be waited on.
    void exitOf(opened.child).then(() => {
      opened.connection.close(`${node.name}'s process exited`);
      this.longLived.delete(node.name);
    });
    return opened;
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
    return this.liveTasks.has(taskId);
  }

  /** The root's call: as a worker's `agent.invoke`, with the root as the caller. Rejects with `CallError`. */
  async invokeFromRoot(agent: string, prompt: string, options: { spawnContext?: SpawnContext; onProgress?: ProgressSink; signal?: AbortSignal } = {}): Promise<RootInvokeResult> {
    const controller = new AbortController();
    const call: RootCall = { controller, clarification: undefined };
    const abort = (): void => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) abort();
    else options.signal?.addEventListener('abort', abort, { once: true });
    this.rootCalls.add(controller);
    const progress: ProgressSink = (event) => {
      try {
        options.onProgress?.(event);
      } catch (err) {
        this.log(`the root's onProgress threw: ${(err as Error)?.message ?? String(err)}`);
      }
    };
    try {
      const params: InvokeParams = { agent, prompt, handle: null, include_trace: false, ...(options.spawnContext ? { spawn_context: options.spawnContext } : {}) };
      const result: RootInvokeResult = await this.track(ROOT, this.invoke(this.rootNode(), params, progress, controller.signal, call));
      const clarification = call.clarification;
      if (!clarification) return result;
      // A caller that cannot carry a question back fails the task, quoting it; nobody guesses an answer.
      const quoted = clarification.questions.map((q) => JSON.stringify(q.question)).join(', ');
      return {
        ...result,
        success: false,
        error: `${clarification.asker.agent} asked ${quoted} and this call has no question handler to answer it`,
        // The worker's later outcome added nothing (see `decided` in invoke); a cut made before stays said.
        metadata: { ...(result.metadata ?? {}), clarification },
        cancelled_by_user: false,
      };
    } finally {
      for (const [tree, owner] of this.rootTrees) {
        if (owner !== call) continue;
        this.rootTrees.delete(tree);
        this.human.rootTaskEnded(tree);
      }
      options.signal?.removeEventListener('abort', abort);
      this.rootCalls.delete(controller);
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
      for (const controller of this.rootCalls) controller.abort(new Error('the broker is stopping'));
      for (const connection of this.made) connection.close('the broker is stopping');
      // A child still being opened is ended and waited for until it exits; its call is then cut short.
      const opening = [...this.spawning].map(([child, cutShort]) => endChild(child, this.graceMs).then(() => cutShort(new Error('broker: stopping'))));
      await this.settleAll();
      await Promise.all(opening);
      await Promise.allSettled([...this.opening]);
      await Promise.all([...this.longLived.values()].map((opened) => endChild(opened.child, this.graceMs)));
    });
    begin(); // `stopping` is set before anything it does can look at it
    return this.stopping;
  }

  private async settleAll(): Promise<void> {
    for (;;) {
      const pending = [...this.inflight.values()].flatMap((set) => [...set]);
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }

  private rootNode(): NodeState {
    const root = this.nodes.get(ROOT)!;
    const configured = this.options.root;
    root.spawnContext = {
      ...(this.rootWorkspace !== undefined ? { workspace_root: this.rootWorkspace } : {}),
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
    return this.options.agents?.[role] ?? {};
  }

  private ended(name: string): void {
    const node = this.nodes.get(name);
    if (node) node.ended = true;
    this.mail.forget(name);
  }

  /**
   * What a node's calls act as. The root and a virtual agent's worker: themselves. A long-lived
   * participant running one task: itself within that task (the task's chain, callers, tree and
   * spawn context); running none: itself under the root. Running several at once, its calls
   * cannot be attributed to one: `several` lists the tasks, and `scope` is the participant on its
   * own tree with the deepest of their chains (that task's context) and every task's chains as
   * its other chains (so that its callees' cycle checks see every task).
   */
  private acting(node: NodeState): { scope: NodeState; several?: NodeState[] } {
    const tasks = node.kind === 'participant' ? [...(this.serving.get(node.name)?.values() ?? [])] : [];
    if (tasks.length === 0) return { scope: node };
    const within = tasks.map((task): NodeState => ({ ...node, ...task, roster: task.spawnContext.roster }));
    if (within.length === 1) return { scope: within[0]! };
    const deepest = within.reduce((a, b) => (b.chain.length > a.chain.length ? b : a));
    const otherChains = within.flatMap((task) => [task.chain, ...task.otherChains]);
    return { scope: { ...node, chain: deepest.chain, otherChains, spawnContext: deepest.spawnContext, roster: deepest.roster }, several: within };
  }

  private async onCall(call: WorkerCall, context: CallContext): Promise<unknown> {
    const node = this.nodes.get(context.node.name);
    if (!node) throw new CallError(wireError({ kind: 'refused', reason: `${context.node.name} is not a node of this broker` }));
    if (node.ended) throw new CallError(wireError({ kind: 'refused', reason: `${node.name} has ended` }));
    switch (call.method) {
      case 'agent.invoke':
        return this.track(node.name, this.invoke(node, call.params, context.progress, context.signal));
      case 'agent.list':
        return this.listAgents();
      case 'mailbox.post':
        return this.mail.post(this.acting(node).scope, call.params.to, call.params.text);
      case 'human.approve':
        return this.human.approve(this.acting(node).scope, call.params, context.signal);
      case 'human.ask': {
        const { scope, several } = this.acting(node);
        if (several) {
          const reason = `${node.name} is running ${several.length} tasks at once: its question cannot be carried to the caller of one of them`;
          throw new CallError(wireError({ kind: 'refused', reason }));
        }
        return this.human.ask(scope, call.params, context.signal);
      }
    }
  }

  /** Registers an invocation as in flight for `caller`, so a reaper can wait for it. */
  private track<T>(caller: string, work: Promise<T>): Promise<T> {
    let set = this.inflight.get(caller);
    if (!set) this.inflight.set(caller, (set = new Set()));
    const entry = work.finally(() => {
      set.delete(entry);
      if (set.size === 0 && this.inflight.get(caller) === set) this.inflight.delete(caller);
    });
    set.add(entry);
    entry.catch(() => {});
    return work;
  }

  /**
   * `agent.invoke` from `caller` (acting as `acting` says): checks, then one task on the callee;
   * resolves the wire's result shape. A participant running several tasks may call only what it
   * could call within each of them, and its callee's context must suit each of them.
   */
  private async invoke(caller: NodeState, params: InvokeParams, progress: ProgressSink, signal: AbortSignal, rootCall?: RootCall): Promise<InvokeResult> {
    if (this.stopping) throw new CallError(wireError({ kind: 'refused', reason: 'the broker is stopping' }));
    const participant = this.participant(params.agent);
    const virtual = participant ? undefined : this.virtuals.get(params.agent);
    if (!participant && !virtual) throw new CallError(wireError({ kind: 'unknown_agent', agent: params.agent }));
    const role = participant ? participant.node.spec : virtual!.name;
    const { scope, several } = this.acting(caller);
    for (const within of several ?? [scope]) {
      checkDelegation({ name: within.name, chain: within.chain, otherChains: within.otherChains, roster: within.kind === 'root' ? within.roster : within.roster ?? [] }, { name: params.agent, role });
    }
    const settings = this.settings(role);
    const spawnContext = await calleeSpawnContext(params.spawn_context, scope.spawnContext, settings);
    for (const within of several ?? []) await calleeSpawnContext(spawnContext, within.spawnContext, settings);

    const task: TaskRunParams = { taskId: `task-${randomUUID()}`, text: params.prompt, spawnContext };
    const fromRoot = scope.kind === 'root';
    // Where the callee works: under the caller, on its tree (a call of the root starts a tree of its own).
    const placed: TaskScope = {
      chain: [...scope.chain, role],
      otherChains: scope.otherChains,
      callers: fromRoot ? [] : [scope.name, ...scope.callers],
      tree: fromRoot ? task.taskId : scope.tree,
      spawnContext,
    };
    // A virtual agent's worker takes its slot now, or the call is refused (before anything is started).
    const releaseSlot = virtual ? this.slots.take(placed.tree) : undefined;
    if (rootCall) this.rootTrees.set(placed.tree, rootCall);
    const text = new TaskText(this.maxTaskTextBytes);
    // A root call's outcome is decided once it has failed with a question: from then on nothing joins its result.
    const decided = (): boolean => rootCall?.clarification !== undefined;
    const onEvent = (event: TaskEventParams): void | Promise<void> => {
      if (event.kind === 'status') return progress({ Step: event.message ?? event.state });
      if (!decided()) text.append(event.text);
      return progress({ Text: event.text });
    };
    let outcome: TaskOutcome;
    if (participant) {
      const name = participant.node.name;
      let tasks = this.serving.get(name);
      if (!tasks) this.serving.set(name, (tasks = new Map()));
      tasks.set(task.taskId, placed);
      try {
        // Said once the callee's task.run is on its way: the callee's frame is the urgent one.
        outcome = await this.runTask(participant.connection, task, onEvent, signal, () => void progress({ Admitted: name }));
      } finally {
        tasks.delete(task.taskId);
        if (tasks.size === 0 && this.serving.get(name) === tasks) this.serving.delete(name);
      }
    } else {
      try {
        outcome = await this.runVirtual(virtual!, placed, task, onEvent, progress, signal);
      } finally {
        releaseSlot!(); // once the worker and everything it started are reaped
      }
    }
    const result: InvokeResult = {
      success: outcome.state === 'completed',
      response: text.toString(),
      messages: this.mail.drain(caller.name),
      cancelled_by_user: signal.aborted,
    };
    if (outcome.state !== 'completed') result.error = outcome.message ?? `the task ended ${outcome.state}`;
    // What the callee says of the cut is ignored: only the broker knows what it kept.
    const metadata: TaskMetadata = { ...(decided() ? {} : outcome.metadata) };
    delete metadata.responseCutBytes;
    if (text.cut > 0) metadata.responseCutBytes = text.cut;
    if (Object.keys(metadata).length > 0) result.metadata = metadata;
    return result;
  }

  /**
   * Runs one task on a connection. If `signal` aborts, the task's `task.run` gets a `req.cancel`
   * (as soon as it is out: it may wait for room in a full outbound queue); a worker that has not
   * answered within the grace period, or has not even been sent the task by then, ends the task
   * `canceled` here (a task worker is then reaped by its caller; a long-lived participant is left
   * running).
   */
  private async runTask(
    connection: ParticipantConnection,
    params: TaskRunParams,
    onEvent: TaskEventListener,
    signal: AbortSignal,
    sent?: () => void,
  ): Promise<TaskOutcome> {
    this.liveTasks.add(params.taskId);
    try {
      return await new Promise<TaskOutcome>((resolve) => {
        const name = connection.node.name;
        let running: RunningTask | undefined;
        let settled = false;
        let timer: NodeJS.Timeout | undefined;
        const settle = (outcome: TaskOutcome): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(outcome);
        };
        // Installed before the task.run waits for room, so that a full queue cannot hold off the abort.
        const onAbort = (): void => {
          if (running) void connection.cancelTask(running.id);
          timer = setTimeout(() => {
            const message = running ? `${name} did not end its task within ${this.graceMs} ms` : `${name} could not be sent the task within ${this.graceMs} ms`;
            settle({ state: 'canceled', message: `cancelled: ${message}` });
          }, this.graceMs);
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
        void connection.runTask(params, onEvent).then((task) => {
          running = task;
          // Sent after the abort (or after the task already ended canceled here): withdrawn at once.
          if (signal.aborted) void connection.cancelTask(task.id);
          if (settled) return;
          sent?.();
          void task.outcome.then(settle);
        });
      });
    } finally {
      this.liveTasks.delete(params.taskId);
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
        connection: { log: (message) => this.log(`${agent.name}'s worker: ${message}`), ...this.options.serve, directory: this.directory, registry: this.registry, calls: this.calls },
        onAdmitted: (node) => {
          admitted = { name: node.name, kind: 'worker', role: agent.name, ...placed, spawnContext, roster: spawnContext.roster, ended: false };
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
      return await this.runTask(worker.connection, { ...params, spawnContext: worker.spawnContext }, onEvent, signal);
    } finally {
      await worker.stop(this.graceMs).catch((err: unknown) => this.log(`stopping ${worker.node.name}: ${(err as Error)?.message ?? String(err)}`));
      this.ended(worker.node.name);
      // What the worker started is being cancelled (its connection is gone): wait until it is reaped too.
      while (this.inflight.get(worker.node.name)?.size) await Promise.allSettled([...this.inflight.get(worker.node.name)!]);
    }
  }
}

function positiveInteger(option: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`broker: ${option} must be a positive integer, not ${String(value)}`);
  return value;
}

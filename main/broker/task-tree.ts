import type { SpawnContext } from '../fabric/wire/payloads.js';
import type { Clarification } from './human-loop.js';
import type { NodeState } from './nodes.js';

/**
 * Where a node works within one task: for a virtual agent's worker, for its life; for a long-lived
 * participant, while it runs that task.
 */
export interface TaskScope {
  chain: string[];
  otherChains: string[][];
  callers: string[];
  tree: string;
  spawnContext: SpawnContext;
}

/** One call the root made: how to end it, and why it was ended. */
export interface RootCall {
  controller: AbortController;
  clarification: Clarification | undefined;
}

/** What a node's calls act as (see `TaskTree.acting`). */
export interface Acting {
  scope: NodeState;
  /** Set when a long-lived participant runs several tasks at once: the node within each of them. */
  several?: NodeState[];
}

/**
 * The task tree: which call of the root each tree belongs to, which tasks each long-lived
 * participant is running and where it works in each, and so what a node's calls act as. A tree is
 * named after the task id of the root call that started it (or, for a participant acting as
 * itself and what it starts, after the participant).
 */
export class TaskTree {
  /**
   * The tasks each long-lived participant runs (`task.run` sent, no outcome yet): where it works in
   * each, in the order they were sent. A participant's list stays once empty: a `Map` entry added
   * and removed on every task would make V8 rehash this long-lived `Map` each time.
   */
  private readonly serving = new Map<string, TaskScope[]>();
  /** The root's calls in flight. */
  private readonly rootCalls = new Set<RootCall>();
  /** The root call each tree was started by. */
  private readonly rootTrees = new Map<string, RootCall>();
  /**
   * The ids of the tasks local participants are running (`task.run` sent, no outcome yet). A list,
   * not a `Set`: there are few at a time, and a long-lived `Set` that gains and loses a key per task
   * rehashes into fresh tables in V8's old generation.
   */
  private readonly liveTasks: string[] = [];

  /**
   * What a node's calls act as. The root and a virtual agent's worker: themselves. A long-lived
   * participant running one task: itself within that task (the task's chain, callers, tree and
   * spawn context); running none: itself under the root. Running several at once, its calls
   * cannot be attributed to one: `several` lists the tasks, and `scope` is the participant on its
   * own tree with the deepest of their chains (that task's context) and every task's chains as
   * its other chains (so that its callees' cycle checks see every task).
   */
  acting(node: NodeState): Acting {
    const serving = node.kind === 'participant' ? this.serving.get(node.name) : undefined;
    if (serving === undefined || serving.length === 0) return { scope: node };
    const within = serving.map((task): NodeState => ({ ...node, ...task, roster: task.spawnContext.roster }));
    if (within.length === 1) return { scope: within[0]! };
    const deepest = within.reduce((a, b) => (b.chain.length > a.chain.length ? b : a));
    const otherChains = within.flatMap((task) => [task.chain, ...task.otherChains]);
    return { scope: { ...node, chain: deepest.chain, otherChains, spawnContext: deepest.spawnContext, roster: deepest.roster }, several: within };
  }

  /**
   * Where the callee of a call made as `scope` works, on the task `taskId`: under the caller, on its
   * tree (a call of the root starts a tree of its own, named after the task).
   */
  place(scope: NodeState, role: string, taskId: string, spawnContext: SpawnContext): TaskScope {
    const fromRoot = scope.kind === 'root';
    return {
      chain: [...scope.chain, role],
      otherChains: scope.otherChains,
      callers: fromRoot ? [] : [scope.name, ...scope.callers],
      tree: fromRoot ? taskId : scope.tree,
      spawnContext,
    };
  }

  /** Participant `name` runs a task, placed as `scope` (one object per task): its calls act within it until the returned end is called. */
  serve(name: string, scope: TaskScope): () => void {
    let tasks = this.serving.get(name);
    if (!tasks) this.serving.set(name, (tasks = []));
    tasks.push(scope);
    return () => {
      const at = tasks.indexOf(scope);
      if (at >= 0) tasks.splice(at, 1);
    };
  }

  /** The participants running a task now (for tests and diagnostics). */
  servingNames(): string[] {
    return [...this.serving].filter(([, tasks]) => tasks.length > 0).map(([name]) => name);
  }

  /** A participant that has ended: its (empty) list of tasks goes. */
  forget(name: string): void {
    if (this.serving.get(name)?.length === 0) this.serving.delete(name);
  }

  /** A local participant has been sent task `taskId`: it owns that task until the returned end is called. */
  taskRunning(taskId: string): () => void {
    this.liveTasks.push(taskId);
    return () => {
      const at = this.liveTasks.indexOf(taskId);
      if (at < 0) return;
      this.liveTasks[at] = this.liveTasks[this.liveTasks.length - 1]!;
      this.liveTasks.pop();
    };
  }

  /** Whether a local participant (long-lived or a virtual agent's worker) is running the task with this id right now. */
  ownsTask(taskId: string): boolean {
    return this.liveTasks.includes(taskId);
  }

  /** A call of the root begins: aborting `controller` cancels everything under it. */
  beginRootCall(): RootCall {
    const call: RootCall = { controller: new AbortController(), clarification: undefined };
    this.rootCalls.add(call);
    return call;
  }

  /** `call` started tree `tree` (its callee's task id). */
  claim(tree: string, call: RootCall): void {
    this.rootTrees.set(tree, call);
  }

  /** The root call has ended: forgets it and returns the trees it had started (their root tasks have ended). */
  endRootCall(call: RootCall): string[] {
    this.rootCalls.delete(call);
    const ended: string[] = [];
    for (const [tree, owner] of this.rootTrees) {
      if (owner !== call) continue;
      this.rootTrees.delete(tree);
      ended.push(tree);
    }
    return ended;
  }

  /** The root task a node works under: its tree, when a root call owns that tree. */
  rootTaskOf(node: NodeState): string | undefined {
    return this.rootTrees.has(node.tree) ? node.tree : undefined;
  }

  /** Cancels every root call in flight (and so every tree under one). */
  abortRootCalls(reason: Error): void {
    for (const call of this.rootCalls) call.controller.abort(reason);
  }

  /**
   * A question from `asker` reached a root with no question handler: the root call owning its tree
   * fails quoting it (the first such question is the one quoted) and its tree is cancelled. Returns
   * false when no live root call owns the asker's tree.
   */
  clarify(asker: NodeState, request: Clarification): boolean {
    const call = this.rootTrees.get(asker.tree);
    if (!call || call.controller.signal.aborted) return false;
    if (call.clarification) return true;
    call.clarification = request;
    // The tree is cancelled once the asker's human.ask has its error (thrown by our caller, and
    // written this turn): cancelled first, the worker would withdraw a question already answered.
    setImmediate(() => call.controller.abort(new Error('a question no one can answer')));
    return true;
  }
}

import type { RootInvokeResult, RootTransport } from '../../broker/index.js';
import type { ProgressEvent } from '../../fabric/wire/broker-to-worker.js';
import type { WindowSend } from './bridge-host.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type Asker, type StartTask, type TaskNode, type TaskState, type TaskView, type TimelineEntry } from './contract.js';
import { MAX_ERROR_CHARS, MAX_TEXT_PER_TASK, keptText } from './kept-text.js';
import { BridgeRefusal } from './refusal.js';
import { TaskTree, relayedStart } from './task-tree.js';

/** Ended tasks kept for a (re)loaded window's snapshot. */
const MAX_ENDED_TASKS = 50;
const MAX_ENTRIES_PER_TASK = 1000;

export interface TaskRecord {
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

/**
 * The tasks the window started through the root: each one's view (its tree of nodes and its
 * timeline, both bounded), what the window is sent as they change, and which task an asker works
 * under (`attribute`), from the broker's records only.
 */
export class TaskBoard {
  private readonly tasks = new Map<string, TaskRecord>();
  private nextTask = 0;

  constructor(
    private readonly root: RootTransport,
    private readonly emit: WindowSend,
  ) {}

  /** The tasks kept (running, and the last ended ones), for a snapshot. */
  views(): TaskView[] {
    return [...this.tasks.values()].map((t) => t.view);
  }

  start({ agent, prompt }: StartTask): { taskId: string } {
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

  /** Resolves once the task has ended, everything it started reaped. */
  async cancel(taskId: string): Promise<{ cancelled: true }> {
    const task = this.tasks.get(taskId);
    if (!task || task.view.state !== 'running') throw new BridgeRefusal(`refused ${INVOKE_CHANNELS.cancelTask}: ${taskId} is not running`);
    task.controller.abort(new Error('cancelled from the window'));
    await task.settled;
    return { cancelled: true };
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

  private forgetOldTasks(): void {
    const ended = [...this.tasks.values()].filter((t) => t.view.state !== 'running');
    for (const t of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_TASKS))) this.tasks.delete(t.view.taskId);
  }

  /** Draws `node` unless its name is drawn already (or, past the tree's bound, the note that says so, once). */
  private addNode(task: TaskRecord, node: TaskNode): void {
    const added = task.tree.add(node);
    if (added) this.emit(EVENT_CHANNELS.task, { type: 'node', taskId: task.view.taskId, node: { ...added } });
  }

  /** Adds `entry` to `task`'s timeline (none: nothing), bounded, and sends it to the window. */
  addEntry(task: TaskRecord | undefined, entry: Omit<TimelineEntry, 'at'>): void {
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
  attribute(asker: Asker, rootTask?: string): TaskRecord | undefined {
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

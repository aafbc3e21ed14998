import { CallError } from '../fabric/admission/index.js';
import { wireError } from '../fabric/wire/wire-error.js';

/** Live task workers (virtual agents' workers) in one broker, by default (`BrokerOptions.maxWorkers`). */
export const MAX_WORKERS = 16;
/** Live task workers under one root task (one tree), by default (`BrokerOptions.maxWorkersPerTask`). */
export const MAX_WORKERS_PER_TASK = 8;

/**
 * The fan-out caps: a slot per live task worker, counted for the whole broker and for the tree it
 * works under. A call past a cap is refused at once, never queued: a caller holds its own slot
 * while its callees would wait for one, so a queue could deadlock a tree on itself.
 */
export class WorkerSlots {
  private live = 0;
  private readonly perTree = new Map<string, number>();

  constructor(
    private readonly max: number = MAX_WORKERS,
    private readonly maxPerTask: number = MAX_WORKERS_PER_TASK,
  ) {}

  /** Takes a slot for a worker on `tree`, or throws the `refused` error naming the cap; returns the (idempotent) release. */
  take(tree: string): () => void {
    if (this.live >= this.max) {
      throw new CallError(wireError({ kind: 'refused', reason: `too many workers: at most ${this.max} live at once in this gateway (maxWorkers)` }));
    }
    const inTree = this.perTree.get(tree) ?? 0;
    if (inTree >= this.maxPerTask) {
      throw new CallError(wireError({ kind: 'refused', reason: `too many workers in this task: at most ${this.maxPerTask} live at once under one root task (maxWorkersPerTask)` }));
    }
    this.live++;
    this.perTree.set(tree, inTree + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.live--;
      const left = (this.perTree.get(tree) ?? 1) - 1;
      if (left === 0) this.perTree.delete(tree);
      else this.perTree.set(tree, left);
    };
  }

  /** Task workers live now (started or starting, not yet reaped). */
  get count(): number {
    return this.live;
  }
}

/**
 * The invocations in flight, by the node that made them: a node's worker is reaped only after all
 * of its own have settled, and `stop()` waits for every one. Counted, not kept: a call costs a
 * count and one reaction on its promise, and only a waiter makes a promise. A node's count stays
 * once it is back to 0, until the node ends (`forget`): a `Map` entry added and removed on every
 * call would make V8 rehash the long-lived `Map` each time; once per node is the node's own cost.
 */
export class InFlight {
  private readonly byCaller = new Map<string, Caller>();

  /** Registers `work` as in flight for `caller` until it settles; returns `work`. */
  track<T>(caller: string, work: Promise<T>): Promise<T> {
    let entry = this.byCaller.get(caller);
    if (!entry) this.byCaller.set(caller, (entry = { count: 0, idle: [], ended: false }));
    const counted = entry;
    counted.count++;
    const done = (): void => {
      if (--counted.count > 0) return;
      for (const resolve of counted.idle.splice(0)) resolve();
      if (counted.ended && this.byCaller.get(caller) === counted) this.byCaller.delete(caller);
    };
    work.then(done, done);
    return work;
  }

  /** Resolves once `caller` has nothing in flight (what settles may have started more: waited for too). */
  settled(caller: string): Promise<void> {
    const entry = this.byCaller.get(caller);
    if (!entry || entry.count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => entry.idle.push(resolve)).then(() => this.settled(caller));
  }

  /**
   * `caller` has ended (its name is never used again): its count goes once it is back to 0, at
   * once if it is. Without this every node's count stayed for the broker's life.
   */
  forget(caller: string): void {
    const entry = this.byCaller.get(caller);
    if (!entry) return;
    if (entry.count === 0) this.byCaller.delete(caller);
    else entry.ended = true;
  }

  /** Resolves once nothing is in flight, for any caller. */
  async allSettled(): Promise<void> {
    for (;;) {
      const busy = [...this.byCaller].filter(([, entry]) => entry.count > 0);
      if (busy.length === 0) return;
      await Promise.all(busy.map(([caller]) => this.settled(caller)));
    }
  }
}

interface Caller {
  count: number;
  /** Called once the count is back to 0. */
  idle: (() => void)[];
  /** The caller has ended: the entry goes once the count is back to 0 (see `forget`). */
  ended: boolean;
}

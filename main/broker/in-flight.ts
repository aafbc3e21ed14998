/**
 * The invocations in flight, by the node that made them: a node's worker is reaped only after all
 * of its own have settled, and `stop()` waits for every one. Counted, not kept: a call costs a
 * count and one reaction on its promise, and only a waiter makes a promise.
 */
export class InFlight {
  private readonly byCaller = new Map<string, Caller>();

  /** Registers `work` as in flight for `caller` until it settles; returns `work`. */
  track<T>(caller: string, work: Promise<T>): Promise<T> {
    let entry = this.byCaller.get(caller);
    if (!entry) this.byCaller.set(caller, (entry = { count: 0, idle: [] }));
    const counted = entry;
    counted.count++;
    const done = (): void => {
      if (--counted.count > 0) return;
      if (this.byCaller.get(caller) === counted) this.byCaller.delete(caller);
      for (const resolve of counted.idle) resolve();
    };
    work.then(done, done);
    return work;
  }

  /** Resolves once `caller` has nothing in flight (what settles may have started more: waited for too). */
  settled(caller: string): Promise<void> {
    const entry = this.byCaller.get(caller);
    if (!entry) return Promise.resolve();
    return new Promise<void>((resolve) => entry.idle.push(resolve)).then(() => this.settled(caller));
  }

  /** Resolves once nothing is in flight, for any caller. */
  async allSettled(): Promise<void> {
    while (this.byCaller.size > 0) await Promise.all([...this.byCaller.keys()].map((caller) => this.settled(caller)));
  }
}

interface Caller {
  count: number;
  /** Called once the count is back to 0. */
  idle: (() => void)[];
}

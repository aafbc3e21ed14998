/**
 * The invocations in flight, by the node that made them: a node's worker is reaped only after all
 * of its own have settled, and `stop()` waits for every one.
 */
export class InFlight {
  private readonly byCaller = new Map<string, Set<Promise<unknown>>>();

  /** Registers `work` as in flight for `caller` until it settles; returns `work`. */
  track<T>(caller: string, work: Promise<T>): Promise<T> {
    let set = this.byCaller.get(caller);
    if (!set) this.byCaller.set(caller, (set = new Set()));
    const entry = work.finally(() => {
      set.delete(entry);
      if (set.size === 0 && this.byCaller.get(caller) === set) this.byCaller.delete(caller);
    });
    set.add(entry);
    entry.catch(() => {});
    return work;
  }

  /** Resolves once `caller` has nothing in flight (what settles may have started more: waited for too). */
  async settled(caller: string): Promise<void> {
    while (this.byCaller.get(caller)?.size) await Promise.allSettled([...this.byCaller.get(caller)!]);
  }

  /** Resolves once nothing is in flight, for any caller. */
  async allSettled(): Promise<void> {
    for (;;) {
      const pending = [...this.byCaller.values()].flatMap((set) => [...set]);
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }
}

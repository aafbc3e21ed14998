/**
 * Counts frames dropped for naming nothing in flight (a late result, a stale cancel) and logs
 * the 1st, 2nd, 4th, 8th… of them: a peer that keeps doing it cannot flood the log.
 */
export class DropLog {
  private count = 0;
  constructor(private readonly log: (message: string) => void) {}

  drop(what: string): void {
    this.count++;
    if ((this.count & (this.count - 1)) === 0) this.log(`dropped ${what} (drop #${this.count} on this connection)`);
  }

  get dropped(): number {
    return this.count;
  }
}

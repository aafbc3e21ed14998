import type { ChildProcess } from 'node:child_process';
import { openConnection, type AdmittedNode, type OpenConnectionOptions, type OpenedConnection, type ParticipantConnection } from '../fabric/admission/index.js';
import { endChild, exitOf, letGoOfStdioOnExit } from './runners/end-child.js';

/** How the long-lived participants reach the rest of the broker. */
export interface LongLivedHost {
  graceMs: number;
  /** Whether the broker has begun to stop (an open finishing then is closed and reaped). */
  stopping(): boolean;
  /** The node has ended: its open failed, or its connection closed. */
  ended(name: string): void;
}

/**
 * The long-lived participants the broker opened (`openParticipant`), from spawn to exit: their
 * children and connections, and what `stop()` must end. A participant is listed until its child
 * has exited; its connection goes with the child (its calls cancelled), even when a process of the
 * child's still holds fd 3, so nothing the broker no longer lists can call or be waited on.
 */
export class LongLivedParticipants {
  /** The connections and children, by node name, until each child has exited. */
  private readonly byName = new Map<string, OpenedConnection>();
  /**
   * Opens not yet settled, and the children they spawned so far, each with how to cut its open
   * short: `close()` ends those children, waits for their exit (not for their stdio to close,
   * which a process of theirs may hold), then ends the opens.
   */
  private readonly opening = new Set<Promise<unknown>>();
  private readonly spawning = new Map<ChildProcess, (reason: Error) => void>();
  /** Every connection made and not yet closed, listed or not: `close()` closes them all. */
  private readonly made = new Set<ParticipantConnection>();

  constructor(private readonly host: LongLivedHost) {}

  /** The participants listed now (their children still run), in the order they were opened. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Whether `name` is a long-lived participant whose child still runs. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Spawns `node`'s worker and waits for its hello (see `Broker.openParticipant`). */
  open(node: AdmittedNode, command: string, args: readonly string[], options: OpenConnectionOptions): Promise<OpenedConnection> {
    const opening = this.spawn(node, command, args, options);
    this.opening.add(opening);
    void opening.catch(() => {}).finally(() => this.opening.delete(opening));
    return opening;
  }

  /**
   * The first half of `stop()`: closes every connection made, ends every child still being opened
   * and resolves once those children have exited (their opens then reject `broker: stopping`).
   */
  close(): Promise<void> {
    for (const connection of this.made) connection.close('the broker is stopping');
    return Promise.all([...this.spawning].map(([child, cutShort]) => endChild(child, this.host.graceMs).then(() => cutShort(new Error('broker: stopping'))))).then(() => {});
  }

  /** The second half of `stop()`: once every open has settled, ends every child still running; resolves once all have exited. */
  async reap(): Promise<void> {
    await Promise.allSettled([...this.opening]);
    await Promise.all([...this.byName.values()].map((opened) => endChild(opened.child, this.host.graceMs)));
  }

  private async spawn(node: AdmittedNode, command: string, args: readonly string[], options: OpenConnectionOptions): Promise<OpenedConnection> {
    const { graceMs } = this.host;
    let child: ChildProcess | undefined;
    let cutShort!: (reason: Error) => void;
    const stopped = new Promise<never>((_, reject) => (cutShort = reject));
    let opened: OpenedConnection;
    try {
      const connecting = openConnection(node.spec, command, args, {
        ...options,
        node,
        onSpawn: (c) => {
          child = c;
          c.stdout?.resume();
          letGoOfStdioOnExit(c); // a background process of the child's must not keep the gateway alive
          this.spawning.set(c, cutShort);
          if (this.host.stopping()) void endChild(c, graceMs).then(() => cutShort(new Error('broker: stopping')));
        },
      });
      opened = await Promise.race([connecting, stopped]).catch((err: unknown) => {
        // Cut short by stop(): `connecting` settles on its own later (once the child's stdio has closed).
        void connecting.then((late) => late.connection.close('the broker is stopping'), () => {});
        throw err;
      });
    } catch (err) {
      this.host.ended(node.name);
      throw err;
    } finally {
      if (child) this.spawning.delete(child);
    }
    if (this.host.stopping()) {
      // It said hello while the broker was stopping: nobody will close it later.
      opened.connection.close('the broker is stopping');
      await endChild(opened.child, graceMs);
      this.host.ended(node.name);
      throw new Error('broker: stopping');
    }
    this.byName.set(node.name, opened);
    this.made.add(opened.connection);
    void opened.connection.closed.then(() => {
      this.made.delete(opened.connection);
      this.host.ended(node.name);
    });
    // Listed until its child has exited (not merely its connection closed): stop() reaps one that ignores SIGTERM.
    void exitOf(opened.child).then(() => {
      opened.connection.close(`${node.name}'s process exited`);
      this.byName.delete(node.name);
    });
    return opened;
  }
}

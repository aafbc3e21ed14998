import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after } from 'node:test';
import { Duplex, PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  Directory,
  ParticipantRegistry,
  openConnection,
  type OpenConnectionOptions,
  type OpenedConnection,
} from '../../main/fabric/index.js';

/** Node args that run one of `test/fabric/children/*.ts` (TypeScript, through tsx). */
export function childArgs(script: string, ...args: string[]): string[] {
  return ['--import', 'tsx', fileURLToPath(new URL(`./children/${script}`, import.meta.url)), ...args];
}

export function newFabric() {
  return { directory: new Directory(), registry: new ParticipantRegistry() };
}

export const HELLO = JSON.stringify({
  v: 3,
  id: 1,
  method: 'session.hello',
  params: { card: { name: 'whoever', description: 'a puppet', version: '0', skills: [] } },
});

type Message = Record<string, unknown>;

export type PuppetOptions = Partial<OpenConnectionOptions> & { spec?: string; initial?: string[]; deaf?: boolean };

/**
 * The other end of an in-memory connection: `stream` goes to `serveConnection` (or to a
 * `WorkerSession`), what the test writes reaches it, and the lines it writes are collected.
 * `peer.write` takes a line without its newline.
 */
export function memoryPeer() {
  const toBroker = new PassThrough();
  const fromBroker = new PassThrough();
  const stream = Duplex.from({ readable: toBroker, writable: fromBroker });
  // Destroying the duplex destroys both halves with an AbortError: the test's halves, not the broker's concern.
  for (const half of [toBroker, fromBroker]) half.on('error', () => {});
  const lines: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const reader = createInterface({ input: fromBroker });
  reader.on('error', () => {}); // readline passes its input's errors on
  reader.on('line', (line) => {
    lines.push(line);
    for (const w of waiters.filter((w) => lines.length >= w.count)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  return {
    stream,
    lines,
    write: (line: string) => toBroker.write(`${line}\n`),
    end: () => toBroker.end(),
    /** Resolves once the broker has written `count` lines in all. */
    linesAtLeast: (count: number) =>
      lines.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
  };
}

/** A card for hellos written by hand. */
export const CARD = { name: 'whoever', description: 'a puppet', version: '0', skills: [] };

/** A puppet worker (children/puppet.ts) on a real socketpair, driven over its stdin/stdout. */
export class Puppet {
  private readonly seen: Message[] = [];
  private readonly waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  opened!: OpenedConnection;

  private constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as Message;
      this.seen.push(message);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(message)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    });
  }

  /** Spawns a puppet that writes `initial` lines first (by default a hello) and waits for the broker's hello. */
  static async open(fabric: ReturnType<typeof newFabric>, options: PuppetOptions = {}): Promise<Puppet> {
    const { puppet, opening } = Puppet.start(fabric, options);
    puppet.opened = await opening;
    return puppet;
  }

  /** Spawns a puppet and hands it over at once, with the open still under way (it may fail). */
  static start(fabric: ReturnType<typeof newFabric>, options: PuppetOptions = {}): { puppet: Puppet; opening: Promise<OpenedConnection> } {
    let puppet: Puppet | undefined;
    const args = childArgs('puppet.ts', JSON.stringify(options.initial ?? [HELLO]), ...(options.deaf ? ['deaf'] : []));
    const opening = openConnection(options.spec ?? 'puppet', process.execPath, args, {
      ...fabric,
      ...options,
      onSpawn: (child) => (puppet = new Puppet(child)),
    });
    opening.catch(() => {});
    return { puppet: puppet!, opening };
  }

  /** Every report seen so far and not yet taken by `next`. */
  get reports(): readonly Message[] {
    return this.seen;
  }

  get connection() {
    return this.opened.connection;
  }

  command(command: Message): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  send(frame: unknown): void {
    this.command({ send: typeof frame === 'string' ? frame : JSON.stringify(frame) });
  }

  /** The first report (already seen or still to come) that matches. */
  next(match: (m: Message) => boolean): Promise<Message> {
    const found = this.seen.find(match);
    if (found) {
      this.seen.splice(this.seen.indexOf(found), 1);
      return Promise.resolve(found);
    }
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The frame the puppet received that answers `id`. */
  async answer(id: number): Promise<Message> {
    const m = await this.next((m) => (m.got as Message | undefined)?.id === id && !('method' in (m.got as Message)));
    return m.got as Message;
  }

  async ping(k: number): Promise<void> {
    this.command({ ping: k });
    await this.next((m) => m.pong === k);
  }

  /** Resolves once the child process has exited. */
  exited(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  end(): void {
    this.child.stdin!.end();
  }
}

/** Opens puppets for one test file: each on a fresh fabric, its log silenced, all killed after the file's tests. */
export function puppetOpener(): (options?: PuppetOptions) => Promise<Puppet> {
  const opened: Puppet[] = [];
  after(() => opened.forEach((p) => p.child.kill('SIGKILL')));
  return async (options = {}) => {
    const p = await Puppet.open(newFabric(), { log: () => {}, ...options });
    opened.push(p);
    return p;
  };
}

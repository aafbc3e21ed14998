import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import {
  CallError,
  Directory,
  ParticipantRegistry,
  openConnection,
  wireError,
  type CallContext,
  type CallHandler,
  type OpenedConnection,
  type WorkerCall,
} from '../../main/fabric/index.js';

export type Frame = Record<string, unknown>;

/** Every child spawned here, for the test file's `after` to kill. */
export const children: ChildProcess[] = [];

/** Node args that run one of `test/worker/children/*.ts` (TypeScript, through tsx). */
export function workerArgs(script: string, ...args: string[]): string[] {
  return ['--import', 'tsx', fileURLToPath(new URL(`./children/${script}`, import.meta.url)), ...args];
}

/** The lines a worker wrote on its fd 3, as the broker's end read them, byte for byte. */
export class Recorder {
  readonly lines: string[] = [];
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');
  private readonly waiters: { match: (frame: Frame) => boolean; resolve: (frame: Frame) => void }[] = [];

  /** Listens beside the broker's end (a second 'data' listener sees the same chunks). */
  tap(stream: Socket): void {
    stream.on('data', (chunk: Buffer) => {
      const text = this.partial + this.decoder.write(chunk);
      const lines = text.split('\n');
      this.partial = lines.pop()!;
      for (const line of lines) {
        this.lines.push(line);
        const frame = JSON.parse(line) as Frame;
        for (const waiter of [...this.waiters]) {
          if (!waiter.match(frame)) continue;
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(frame);
        }
      }
    });
  }

  get frames(): Frame[] {
    return this.lines.map((line) => JSON.parse(line) as Frame);
  }

  /** The first frame (already read or still to come) that matches. */
  next(match: (frame: Frame) => boolean): Promise<Frame> {
    const found = this.frames.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}

type Handlers = { [M in WorkerCall['method']]?: (call: Extract<WorkerCall, { method: M }>, context: CallContext) => unknown };

/** A `CallHandler` answering the methods given, refusing the others as a broker serving none would. */
export function serving(handlers: Handlers): CallHandler {
  return async (call, context) => {
    const handler = handlers[call.method] as ((call: WorkerCall, context: CallContext) => unknown) | undefined;
    if (!handler) throw new CallError(wireError({ kind: 'refused', reason: `this test serves no ${call.method}` }));
    return handler(call, context);
  };
}

export interface SpawnedWorker extends OpenedConnection {
  recorder: Recorder;
}

/** Spawns a test worker on a socketpair at fd 3 through the real broker end, recording what it writes. */
export async function spawnWorker(script: string, args: string[], calls?: (worker: () => SpawnedWorker) => CallHandler): Promise<SpawnedWorker> {
  const recorder = new Recorder();
  let spawned: SpawnedWorker | undefined;
  const opened = await openConnection('worker', process.execPath, workerArgs(script, ...args), {
    directory: new Directory(),
    registry: new ParticipantRegistry(),
    calls: calls?.(() => spawned!),
    onSpawn: (child) => {
      children.push(child);
      child.stdout!.resume();
      recorder.tap(child.stdio[3] as Socket);
    },
  });
  spawned = { ...opened, recorder };
  return spawned;
}

/** Runs one task with `text`; the library worker's report (its completed outcome's message, parsed). */
export async function report(worker: SpawnedWorker, text: string): Promise<unknown> {
  const task = await worker.connection.runTask({ taskId: `task-${text}`, text });
  const outcome = await task.outcome;
  if (outcome.state !== 'completed') throw new Error(`the task ended ${outcome.state}: ${outcome.message}\n${worker.stderrTail()}`);
  return JSON.parse(outcome.message ?? 'null');
}

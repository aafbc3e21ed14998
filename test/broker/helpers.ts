// A state folder of the run's own: workspace writes make their write key there, not in the real home.
import '../helpers/state-home.js';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Broker, RootTransport, type BrokerOptions } from '../../main/broker/index.js';
import { LocalRunner, type LocalRunnerOptions } from '../../main/broker/runners/index.js';
import type { ProgressEvent } from '../../main/fabric/wire/broker-to-worker.js';

export const AGENT = fileURLToPath(new URL('./children/agent.ts', import.meta.url));

/** A broker with virtual agents that all run the scriptable test agent, and a directory their pids go to. */
export interface TestBroker {
  broker: Broker;
  root: RootTransport;
  pidsDir: string;
  runner(extra?: Partial<LocalRunnerOptions>): LocalRunner;
  /** Pids of every worker that said hello so far. */
  pids(): number[];
  /** The pids still alive. */
  alive(): number[];
  close(): Promise<void>;
}

export function startBroker(agents: readonly string[], options: BrokerOptions = {}): TestBroker {
  const pidsDir = mkdtempSync(join(tmpdir(), 'chatty-broker-pids-'));
  const env = { ...process.env, CHATTY_TEST_PIDS: pidsDir };
  const broker = new Broker({ cancelGraceMs: 1_000, log: () => {}, ...options });
  const runner = (extra: Partial<LocalRunnerOptions> = {}): LocalRunner =>
    new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', AGENT], env, reapGraceMs: 1_000, ...extra });
  for (const name of agents) broker.addVirtualAgent(name, runner(), { description: `the ${name}` });
  const pids = (): number[] => readdirSync(pidsDir).map(Number);
  return {
    broker,
    root: new RootTransport(broker),
    pidsDir,
    runner,
    pids,
    alive: () => pids().filter(isAlive),
    async close() {
      await broker.stop();
      rmSync(pidsDir, { recursive: true, force: true });
    },
  };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Waits, a turn of the event loop at a time, until `condition` holds (a state that, once reached,
 * stays); fails (not hangs) after 2 minutes. The cap only keeps a broken test from hanging: a
 * loaded CI machine has taken over 20 s to let a hook's process write 100,000 bytes.
 */
export async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  const deadline = performance.now() + 120_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what} did not come about within 2 minutes`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Fails (not hangs) when `promise` has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A plan for the test agent, as the task text it reads. */
export const plan = (p: unknown): string => JSON.stringify(p);

/** Collects progress events; `until(pred)` resolves at the first event that matches. */
export class ProgressLog {
  readonly events: ProgressEvent[] = [];
  private waiters: { pred: (e: ProgressEvent) => boolean; resolve: () => void }[] = [];
  readonly push = (event: ProgressEvent): void => {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => {
      if (!w.pred(event)) return true;
      w.resolve();
      return false;
    });
  };
  until(pred: (e: ProgressEvent) => boolean): Promise<void> {
    if (this.events.some(pred)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }
}

/** Splits concatenated JSON values (the agent's artifacts are joined without separators). */
export function splitJson(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        out.push(JSON.parse(text.slice(start, i + 1)));
        start = i + 1;
      }
    }
  }
  return out;
}

/**
 * A child that leaves a background sleep on its stdout and stderr (issue 17, item 8): the pid
 * files the sleeps write, ended by those pids after the file's tests (they are the test's own
 * leftovers), the shell arguments of a child that does so and exits without its hello, and the
 * error that start must fail with at once.
 */
export function backgroundPipes(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const pidFile = join(dir, 'background.pid');
  const helloPidFile = join(dir, 'background-of-a-failed-hello.pid');
  let gateway: ChildProcess | undefined;
  after(() => {
    gateway?.kill('SIGKILL');
    for (const file of [pidFile, helloPidFile]) {
      if (!existsSync(file)) continue;
      try {
        process.kill(Number(readFileSync(file, 'utf8').trim()), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    /** `/bin/sh` arguments: a background sleep on the pipes, a line of stderr, exit 3 before any hello. */
    quitterArgs: ['-c', 'sleep 30 0<&- 3>&- & echo $! > "$1"; echo "no model configured" >&2; exit 3', 'sh', helloPidFile],
    failedHello: /^Error: fabric: worker quitter-0 \(\/bin\/sh\) did not complete its hello: [^\n]*\n--- the end of its stderr ---\nno model configured$/,
    /** Runs `gatewayChild` (a script that starts a gateway, runs one task and stops): it must exit 0 while its background sleep lives on. */
    async gatewayExits(gatewayChild: string): Promise<void> {
      const child = (gateway = spawn(process.execPath, ['--import', 'tsx', gatewayChild, pidFile], { stdio: ['ignore', 'pipe', 'inherit'] }));
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
      assert.equal(out, 'stopped after a task that succeeded\n');
      assert.deepEqual([code, signal], [0, null]);
      const background = Number(readFileSync(pidFile, 'utf8').trim());
      assert.doesNotThrow(() => process.kill(background, 0), 'the background sleep still runs: it is not the gateway\'s to end');
    },
  };
}

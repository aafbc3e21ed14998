import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
 * stays); fails (not hangs) after 20 s.
 */
export async function until(condition: () => boolean, what = 'the condition'): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what} did not come about within 20 s`);
    await new Promise((resolve) => setImmediate(resolve));
  }
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

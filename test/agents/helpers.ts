// A state folder of the run's own: workspace writes make their write key there, not in the real home.
import '../helpers/state-home.js';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceRefusal } from '../../main/agents/scripted/workspace-path.js';
import { workerCommand } from '../../main/agents/worker-command.js';
import { Broker, RootTransport, type ApprovalRequest, type BrokerOptions, type QuestionToRoot } from '../../main/broker/index.js';
import { LocalRunner, type Workspace, type WorkspaceFactory } from '../../main/broker/runners/index.js';
import type { AdmittedNode } from '../../main/fabric/admission/index.js';
import type { ProgressEvent } from '../../main/fabric/wire/broker-to-worker.js';
import type { SpawnContext } from '../../main/fabric/wire/payloads.js';

/** A fresh directory under the system's temporary folder, by its real path. */
export function tempDir(prefix = 'chatty-agents-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** Makes `path` a git repository on `main` with one commit (a README holding `readme`); returns `path`. */
export function gitRepoOnMain(path: string, readme = 'a project\n'): string {
  const g = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: path, encoding: 'utf8' });
  g('init', '-q');
  g('symbolic-ref', 'HEAD', 'refs/heads/main');
  writeFileSync(join(path, 'README'), readme);
  g('add', 'README');
  g('commit', '-q', '-m', 'init');
  return path;
}

/**
 * Each worker in a fresh directory `<parent>/<node>` of its own, kept after the task (so a test
 * can look at what it wrote); `seed(dir)` prepares it before the worker starts.
 */
export class DirectoryFactory implements WorkspaceFactory {
  constructor(
    readonly parent: string,
    private readonly seed: (dir: string) => void = () => {},
  ) {}

  async create(node: AdmittedNode, spawnContext: SpawnContext): Promise<Workspace> {
    const dir = join(this.parent, node.name);
    mkdirSync(dir);
    this.seed(dir);
    return { dir, spawnContext: { ...spawnContext, workspace_root: dir }, release: async () => {} };
  }

  dir(node: string): string {
    return join(this.parent, node);
  }
}

/** A broker whose virtual agents all run the real `chatty-gateway worker` (the scripted agent), each in a directory of its own. */
export interface ScriptedBroker {
  broker: Broker;
  root: RootTransport;
  workspaces: DirectoryFactory;
  /** The approvals the root was asked, in order. */
  approvals: ApprovalRequest[];
  /** The questions that reached the root, in order. */
  questions: QuestionToRoot[];
  /** Runs `prompt` on `agent` from the root and collects its progress. */
  invoke(agent: string, prompt: string, signal?: AbortSignal): Promise<Awaited<ReturnType<RootTransport['invoke']>> & { progress: ProgressEvent[] }>;
  close(): Promise<void>;
}

export function startScripted(
  agents: readonly string[],
  human: { approve?: (request: ApprovalRequest) => 'approved' | 'denied'; answer?: (request: QuestionToRoot) => string } = {},
  options: { seed?: (dir: string) => void; broker?: BrokerOptions } = {},
): ScriptedBroker {
  const home = tempDir();
  const workspaces = new DirectoryFactory(home, options.seed);
  const broker = new Broker({ cancelGraceMs: 2_000, log: () => {}, root: { workspaceRoot: home }, ...options.broker });
  const { command, args } = workerCommand();
  for (const name of agents) broker.addVirtualAgent(name, new LocalRunner({ command, args, workspaceFactory: workspaces, reapGraceMs: 2_000 }), { description: `the ${name}` });
  const root = new RootTransport(broker);
  const approvals: ApprovalRequest[] = [];
  const questions: QuestionToRoot[] = [];
  root.onApproval((request) => {
    approvals.push(request);
    return human.approve ? human.approve(request) : 'denied';
  });
  if (human.answer) {
    const answer = human.answer;
    root.onQuestion((request) => {
      questions.push(request);
      return request.questions.map((q) => ({ id: q.id, answer: answer(request) }));
    });
  }
  return {
    broker,
    root,
    workspaces,
    approvals,
    questions,
    async invoke(agent, prompt, signal) {
      const progress: ProgressEvent[] = [];
      const result = await root.invoke(agent, prompt, { onProgress: (event) => progress.push(event), ...(signal ? { signal } : {}) });
      return { ...result, progress };
    },
    async close() {
      await broker.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** The steps of a progress log, in order. */
export const steps = (progress: readonly ProgressEvent[]): string[] => progress.flatMap((event) => ('Step' in event ? [event.Step] : []));

/** Whether `pid` has ended: no such process, or a zombie (dead, its new parent not yet told). */
function ended(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').startsWith('Z');
  } catch {
    return true; // gone between the two looks
  }
}

/**
 * Whether `pid` ends within 30 seconds. A process we did not start cannot be waited for: the
 * signal it was sent has been sent (the call returned), and its death is the kernel's to finish.
 * A hang guard, not a speed check: what the callers watch is a `sleep 600` left running when it
 * was not signalled, which 30 s still tells apart, and a loaded machine may take seconds to reap.
 */
export async function endsSoon(pid: number): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  while (!ended(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return true;
}

/**
 * Kills a racing child and resolves once it has exited: a kill is only sent, and a racer still
 * exchanging folders while the test removes them failed its cleanup (ENOTDIR, in a CI run).
 */
export async function stopRacer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  child.kill('SIGKILL');
  await gone;
}

/**
 * Exchanges the folder `argv[1]` and `argv[1].link` (a symlink to the folder `argv[2]`) atomically
 * (`renameat2(RENAME_EXCHANGE)`, which Node has no call for), until killed.
 */
export const FOLDER_SWAPPER = `
import ctypes, os, sys
folder, outside_dir = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
os.symlink(outside_dir, folder + '.link')
a, b = folder.encode(), (folder + '.link').encode()
sys.stdout.write('go\\n'); sys.stdout.flush()
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
`;

/**
 * Tries `attempt` up to `tries` times, or until one rejects with anything but a WorkspaceRefusal:
 * what a write raced by a process sharing the workspace may end in is a result or a refusal, never
 * a raw error. Returns the raw errors (none, or the one that ended it), the refusals' messages, and
 * the tries made.
 */
export async function untilRawError(tries: number, attempt: () => Promise<unknown>): Promise<{ raw: string[]; refusals: Set<string>; tried: number }> {
  const raw: string[] = [];
  const refusals = new Set<string>();
  let tried = 0;
  for (; tried < tries && raw.length === 0; tried++) {
    await attempt().catch((err: unknown) => {
      if (err instanceof WorkspaceRefusal) refusals.add(err.message);
      else raw.push(String(err));
    });
  }
  return { raw, refusals, tried };
}

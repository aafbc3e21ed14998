import { lstatSync, rmSync } from 'node:fs';
import { BUNDLED_AGENT_NAMES, bundledAgents, detectWorkspace, pruneWorktreesAtStart, workspaceFactoryFor, type BundledWorkspace } from '../../agents/bundled.js';
import { gatewayWorkerEnv } from '../../agents/llm/gateway-location.js';
import { RootCallError, defaultApprovalsFile, type RootTransport } from '../../broker/index.js';
import { LocalRunner } from '../../broker/runners/local-runner.js';
import { workerEnv } from '../../broker/runners/worker-env.js';
import { access, ProtocolGateway, type StartedGateway } from '../../gateway/index.js';
import { openModules, type ModuleEvent } from '../../compose/modules.js';
import { grantsFileBeside } from '../../plugins/grants/index.js';
import { watchModules, type ModuleRegistry, type ModulesWatcher } from '../../plugins/index.js';
import { resolveCommandPaths } from '../agent-command.js';
import { failure } from '../failure.js';
import { outermostMissing } from '../missing-directory.js';
import { grantCommand } from '../grant-command.js';
import { modulesDirWarning } from '../modules-dir-warning.js';
import { decodeTaskText, encodeTaskText } from '../../shell/task-text.js';
import { attachTerminalRoot, defaultApprovalsMode, LineQueue, printable, ProgressPrinter, Screen, writer, type ApprovalsMode } from '../terminal-root/index.js';

export interface ServeOptions {
  modulesDir?: string | undefined;
  runtimeDir?: string | undefined;
  json: boolean;
  /** `--remote-runner URL`; its token comes from `CHATTY_REMOTE_RUNNER_TOKEN`. */
  remoteRunner?: string | undefined;
  /** `--agent NAME=COMMAND`, repeatable (checked by the command line: names usable and unique). */
  agents?: readonly CommandAgent[] | undefined;
  /**
   * Publish the bundled agents (default true; `--no-bundled-agents` turns them off). Any agent is a
   * role, and while the broker has a role the aggregated A2A card (`/.well-known/agent.json`) is
   * refused: without the bundled agents and `--agent`s it lists the forwarded modules.
   */
  bundledAgents?: boolean | undefined;
  /** `--approvals prompt|deny|allow` (default: `prompt` when stdin is a TTY, else `deny`). */
  approvals?: ApprovalsMode | undefined;
  /** `--approvals-file PATH`: where "always" approval rules are kept (default: `defaultApprovalsFile()`). */
  approvalsFile?: string | undefined;
  /** `--watch`: keep serving what `--modules-dir` holds as it changes (docs/plugins.md, "Live plugins"). */
  watch?: boolean | undefined;
  /**
   * `--engine-idle-ms MS`: how long a plugin's engine (its worker thread) stays up after its last
   * call (the registry's `engineIdleMs`; default 5 min, 0 keeps every engine running from the load).
   */
  engineIdleMs?: number | undefined;
}

/** An agent published from the command line: each task runs `/bin/sh -c <command>` as its worker, on fd 3, its relative paths resolved against serve's directory (`resolveCommandPaths`). */
export interface CommandAgent {
  name: string;
  command: string;
}

/** The environment variable that holds the remote runner's bearer token. */
export const REMOTE_RUNNER_TOKEN_ENV = 'CHATTY_REMOTE_RUNNER_TOKEN';

/** `chatty-gateway serve`: runs until SIGINT/SIGTERM/SIGHUP, then removes the socket and token. */
export async function runServe(options: ServeOptions): Promise<number> {
  // The gateway's own lines (the broker's among them, which may quote a worker's stderr), made
  // printable; once the screen is there they go through it, so that none lands inside a question
  // waiting for its answer.
  let sayTo: NodeJS.WritableStream = process.stderr;
  const say = (line: string): void => void sayTo.write(`chatty-gateway: ${printable(line)}\n`);
  let stopRequested: Promise<NodeJS.Signals>;
  let gateway: ProtocolGateway;
  let modules: ModuleRegistry | undefined;
  let watcher: ModulesWatcher | undefined;
  let started: StartedGateway;
  let workspace: BundledWorkspace;
  /** The directory this start created for the runtime directory, if it did: a failed start removes it. */
  let createdRuntimeDir: string | undefined;
  // The bundled examples still to build are built in the background, each served once built.
  // Its line (and its JSON event under --json) waits for the ready line, which stays first.
  // Each build is a child process (the event loop keeps turning); stopping serve stops it.
  const stopBuilds = new AbortController();
  let buildsEnded: Promise<void> = Promise.resolve();
  /** Stops the build under way (its child process, and wizer with it) and waits for it to end: before the registry closes, so no build loads into a closed one. */
  const endBuilds = async (): Promise<void> => {
    stopBuilds.abort();
    await buildsEnded;
  };
  let readySaid = false;
  const heldEvents: ModuleEvent[] = [];
  const tellModule = (event: ModuleEvent): void => {
    if (!readySaid) heldEvents.push(event);
    else if (options.json) process.stdout.write(`${JSON.stringify({ event: 'module', ...event })}\n`);
  };
  const mode = options.approvals ?? defaultApprovalsMode(process.stdin);
  const approvalsFile = options.approvalsFile ?? defaultApprovalsFile();
  const grantsFile = grantsFileBeside(approvalsFile);
  /** The `plugin grant` line a refusal, a denial and the ready line print: with this serve's own folders. */
  const grantLine = (name: string): string => grantCommand(name, { modulesDir: options.modulesDir, approvalsFile: options.approvalsFile });
  try {
    // Check the runtime directory before loading modules (which may build the examples): a bad
    // directory is the user's to fix, and they should hear of it at once, with nothing created.
    access.refuseWindows();
    if (options.watch && options.modulesDir === undefined) {
      throw new Error('--watch needs --modules-dir: it watches the folder that holds your plugin directories (the bundled examples are not watched)');
    }
    const runtimeDir = options.runtimeDir ?? access.defaultRuntimeDir();
    createdRuntimeDir = outermostMissing(runtimeDir);
    access.ensureRuntimeDir(runtimeDir);
    if (options.modulesDir !== undefined) {
      const warning = modulesDirWarning(options.modulesDir);
      if (warning !== undefined) say(warning);
    }
    // Until the gateway starts, Ctrl-C ends the process at once, as usual: nothing of it is
    // there to remove yet. The examples not built yet are not waited for (a first run would
    // spend half a minute or more): they are built behind the ready line.
    // A plugin's capabilities are granted, not taken: remembered beside the approval rules; asked
    // at the prompt, or granted for this run (allow), or refused (deny, or no terminal to ask).
    const grants = { file: grantsFile, mode: mode === 'prompt' ? ('ask' as const) : mode, grantCommand: grantLine };
    const scanFrom = Date.now(); // what is written from here on, while the scan runs, the watch takes as changed
    const opened = await openModules(options.modulesDir, { report: (line) => say(line), remoteRunner: options.remoteRunner, background: { onModule: tellModule, stop: stopBuilds.signal }, registry: { grants, engineIdleMs: options.engineIdleMs } });
    modules = opened.registry;
    tellGranted(modules, tellModule);
    // Watched from the scan on, so a change made while the gateway starts is not missed.
    if (options.watch) watcher = watchModules(modules, options.modulesDir!, { say, changedSince: scanFrom });
    buildsEnded = opened.built;
    workspace = await detectWorkspace(process.cwd());
    await pruneWorktreesAtStart(workspace, say); // what a killed gateway left in this repository
    // From here on a signal is a clean stop: whoever reads the ready line may signal at once, and
    // a signal while the gateway starts must still end with its socket and token removed.
    // A terminal that closed fails every write to it (EIO), before its SIGHUP is handled and after:
    // serve goes on unheard, to stop cleanly on that SIGHUP. A reader that went away (`serve | head
    // -2`, a supervisor that stopped reading) fails them with EPIPE: serve goes on serving unheard,
    // to stop cleanly when told. Any other write error is thrown as before.
    for (const out of [process.stdout, process.stderr]) out.on('error', (err: NodeJS.ErrnoException) => throwUnlessReaderGone(out, err));
    // `on`, not `once`: a second signal before the stop begins (a closing terminal sends SIGHUP
    // twice, the shell's and the kernel's) must not find the default action and kill the process
    // with its socket and token left behind; from the stop on, `leaveNow` answers it.
    stopRequested = new Promise<NodeJS.Signals>((resolve) => {
      process.on('SIGINT', resolve);
      process.on('SIGTERM', resolve);
      // The terminal closed: the workers (each in a session of its own, out of the terminal's
      // reach) are ended by this stop, as on Ctrl-C.
      process.on('SIGHUP', resolve);
    });
    const runnerToken = process.env[REMOTE_RUNNER_TOKEN_ENV] || undefined;
    const remoteRunner = options.remoteRunner === undefined ? undefined : { url: options.remoteRunner, ...(runnerToken ? { token: runnerToken } : {}) };
    gateway = new ProtocolGateway(modules, {
      runtimeDir,
      ...(remoteRunner ? { remoteRunner } : {}),
      approvals: { file: approvalsFile },
      broker: {
        root: { workspaceRoot: workspace.workspaceRoot, ...(workspace.kind === 'git' ? { baseBranch: workspace.baseBranch } : {}) },
        log: (line) => say(`broker: ${line}`),
      },
    });
    started = await gateway.start();
  } catch (err) {
    const code = failure(err);
    await endBuilds();
    await watcher?.close();
    await modules?.close();
    leaveNoRuntimeDir(createdRuntimeDir);
    return code;
  }

  // The agents, once the gateway's location is known: each worker is told it
  // (`CHATTY_GATEWAY_SOCKET`, `CHATTY_GATEWAY_TOKEN_FILE`), so an LLM worker reaches the plugin tools.
  const bundled = options.bundledAgents ?? true;
  const agentNames: string[] = [...(bundled ? BUNDLED_AGENT_NAMES : []), ...(options.agents ?? []).map((a) => a.name)];
  try {
    publishAgents(gateway, workspace, started, bundled, options.agents ?? []);
  } catch (err) {
    const code = failure(err);
    await gateway.stop().catch(failure);
    await endBuilds();
    await watcher?.close();
    await modules.close().catch(failure);
    leaveNoRuntimeDir(createdRuntimeDir);
    return code;
  }

  // The terminal as the root's human; its task prompt reads stdin when stdin is a terminal or
  // `--approvals` was given (a harness driving it through a pipe). Otherwise stdin is never read.
  const root = gateway.transport();
  const tty = process.stdin.isTTY === true;
  const lines = tty || options.approvals !== undefined ? new LineQueue(process.stdin) : undefined;
  const screen = new Screen(process.stderr, tty && process.stderr.isTTY && lines !== undefined ? process.stdin : undefined);
  sayTo = screen.lines;
  // The plugins' capability requests too (issue 20 item 3): asked here, or answered by the mode.
  const terminal = attachTerminalRoot(root, { approvals: mode, input: process.stdin, output: screen.prompts, ...(lines ? { lines } : {}), alwaysFile: gateway.approvals.file, grants: modules.grants, grantCommand: grantLine });
  const tasks = lines ? new TaskPrompt(root, lines, screen) : undefined;

  if (options.json) {
    process.stdout.write(`${JSON.stringify({ event: 'ready', socket: started.socketPath, token: started.tokenPath, agents: agentNames })}\n`);
  } else {
    const count = modules.list().length;
    const building = modules.pending().filter((m) => m.state === 'building').map((m) => m.name);
    process.stdout.write(
      [
        `chatty-gateway: serving ${count} module${count === 1 ? '' : 's'}${building.length > 0 ? ` (building ${building.join(', ')}: each is served once built)` : ''}`,
        `  socket: ${started.socketPath}`,
        `  token:  ${started.tokenPath}`,
        `  try:    curl --unix-socket ${started.socketPath} -H "Authorization: Bearer $(cat ${started.tokenPath})" http://localhost/`,
        agentNames.length === 0
          ? '  agents: none'
          : `  agents: ${agentNames.join(', ')} (${workspace.kind === 'git' ? `in git worktrees of ${workspace.workspaceRoot}, from ${workspace.baseBranch}` : `in ${workspace.workspaceRoot}`})`,
        `  engines: ${enginesLine(modules)}`,
        `  approvals: ${mode}${mode === 'prompt' ? ' (asked here)' : ` (every approval ${mode === 'deny' ? 'denied' : 'allowed'}; a question fails the call that asked it)`}`,
        `  rules:  ${gateway.approvals.file ?? 'none kept'} ("always" approvals; see: chatty-gateway approvals list)`,
        `  grants: ${grantsFile} (plugin capabilities; see: ${grantLine('NAME')})`,
        ...(tasks ? [`  tasks:  type <agent> <task text>, e.g. ${agentNames[0] ?? 'local-coder'} exec echo hi`] : []),
        '  stop:   Ctrl-C',
        '',
      ].join('\n'),
    );
  }

  readySaid = true;
  for (const event of heldEvents.splice(0)) tellModule(event);

  tasks?.start();
  const signal = await stopRequested;
  // A second signal while stopping (a stop that hangs, an impatient Ctrl-C) ends the process at
  // once, and the socket and the token still go with it: through the gateway, which removes them
  // only while they are its own (once its server has closed, a successor's may be there).
  const leaveNow = (again: NodeJS.Signals): void => {
    gateway.leaveAtOnce();
    process.exit(again === 'SIGINT' ? 130 : again === 'SIGHUP' ? 129 : 143);
  };
  process.on('SIGINT', leaveNow);
  process.on('SIGTERM', leaveNow);
  process.on('SIGHUP', leaveNow);
  // Each step runs whatever failed before it (the gateway removes its socket and token in any
  // case); a failure is one line and exit 1, never a stack trace.
  let code = 0;
  // No new task; the running ones are cancelled (their approvals and questions withdrawn), then
  // the broker stops, reaping every worker, before the socket and the token go.
  tasks?.cancelAll();
  try {
    await gateway.stop();
  } catch (err) {
    code = failure(err);
  }
  await tasks?.settled();
  terminal.close();
  lines?.close();
  screen.close();
  sayTo = process.stderr;
  try {
    await endBuilds(); // an example build under way is stopped; its half-built copy is removed by the next start
    await watcher?.close(); // a rebuild under way is stopped (its component is renamed into place whole, or not at all)
    await modules.close();
  } catch (err) {
    code = failure(err);
  }
  if (!options.json && code === 0) process.stdout.write(`chatty-gateway: stopped (${signal})\n`);
  return code;
}

/**
 * A module served once granted (at the prompt, or by `plugin grant` from another terminal) is a
 * module event too (`{"event":"module","name":…,"state":"served"}` under --json).
 */
function tellGranted(modules: ModuleRegistry, tell: (event: ModuleEvent) => void): void {
  const waiting = new Set(modules.pending().filter((m) => m.state === 'ungranted').map((m) => m.name));
  modules.onChange(({ name, change }) => {
    if (change === 'pending' && modules.pending().some((m) => m.name === name && m.state === 'ungranted')) waiting.add(name);
    else if (change === 'unloaded') waiting.delete(name);
    else if (change === 'served' && waiting.delete(name)) tell({ name, state: 'served' });
  });
}

/**
 * The banner's word on the plugins' engines (each a worker thread): how many run now, and when
 * they run, as the registry was given it (`--engine-idle-ms`).
 */
function enginesLine(modules: ModuleRegistry): string {
  const handles = modules.list();
  const running = `${handles.filter((h) => h.engineState === 'running').length} of ${handles.length} running`;
  if (modules.engineIdleMs === 0) return `${running}, each kept from its load (--engine-idle-ms 0)`;
  return `${running}; each starts on its plugin's first call and stops after ${modules.engineIdleMs} ms without one (--engine-idle-ms)`;
}

/** A start that failed leaves no runtime directory it created (`dir`, from `outermostMissing`): nothing of it is there to keep. */
function leaveNoRuntimeDir(dir: string | undefined): void {
  if (dir === undefined) return;
  try {
    // Not there when the start was refused before creating it (ENOENT; ENOTDIR under a file).
    if (!lstatSync(dir).isDirectory()) return;
  } catch {
    return;
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Publishes the bundled agents (unless `bundled` is false) and the `--agent` ones, each worker in the workspace's kind of directory, told where the gateway is. */
function publishAgents(gateway: ProtocolGateway, workspace: BundledWorkspace, started: StartedGateway, bundled: boolean, agents: readonly CommandAgent[]): void {
  const env = gatewayWorkerEnv(started);
  if (bundled) for (const agent of bundledAgents({ workspace, env })) gateway.withVirtualAgent(agent.name, agent.runner, agent.card);
  for (const agent of agents) {
    // Its worker runs in a fresh workspace (a worktree of the base branch in git), where a file
    // beside the user, not committed, is not: its relative paths are the ones `serve` sees.
    const command = resolveCommandPaths(agent.command, process.cwd());
    const runner = new LocalRunner({ command: '/bin/sh', args: ['-c', command], workspaceFactory: workspaceFactoryFor(workspace), env: { ...workerEnv(process.env), ...env } });
    gateway.withVirtualAgent(agent.name, runner, { description: `an agent given on serve's command line: ${command}` });
  }
}

interface RunningTask {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * `serve`'s command line: each line `<agent> <task text>` starts a task from the root (the text read
 * by `decodeTaskText`, as `run` reads its prompt: `\n` a new line, `\\` a backslash), and its progress is
 * shown as it happens, every line tagged `#<n>`: `task #1: local-coder: exec echo hi`, the callee
 * admitted, its steps (a callee's callees' steps read `<callee>: <step>`, the delegation chain),
 * the artifact text, and how it ended. On a terminal the steps are the live status row and the
 * text streams as it comes; piped, each step and each complete line of text is a line (`Screen`).
 * Several tasks may run at once. Approvals and questions read the same lines first (`LineQueue`'s
 * urgent readers).
 */
class TaskPrompt {
  private count = 0;
  private readonly running = new Map<number, RunningTask>();
  private readonly stopping = new AbortController();
  /** Where the tasks' lines go (kept clear of a question waiting for its answer). */
  private readonly out: NodeJS.WritableStream;

  constructor(
    private readonly root: RootTransport,
    private readonly lines: LineQueue,
    private readonly screen: Screen,
  ) {
    this.out = screen.lines;
  }

  start(): void {
    void this.loop();
  }

  /** Stops reading commands and cancels every running task. */
  cancelAll(): void {
    this.screen.commandWaits(false);
    this.stopping.abort();
    for (const task of this.running.values()) task.controller.abort(new Error('the gateway is stopping'));
  }

  /** Resolves once every task started has ended. */
  async settled(): Promise<void> {
    await Promise.all([...this.running.values()].map((task) => task.done));
  }

  private async loop(): Promise<void> {
    for (;;) {
      this.screen.commandWaits(true);
      const line = await this.lines.next(this.stopping.signal);
      this.screen.commandWaits(false);
      if (this.stopping.signal.aborted) return;
      if (line === undefined) {
        this.write('the input ended: no more tasks from here (the gateway goes on serving until Ctrl-C or SIGTERM)');
        return;
      }
      await this.command(line);
    }
  }

  private async command(line: string): Promise<void> {
    const text = line.trim();
    if (text === '') return;
    const space = text.search(/\s/);
    if (space < 0) {
      const names = (await this.root.listAgents()).map((a) => a.name).join(', ') || 'none';
      this.write(`type <agent> <task text>, e.g. local-coder exec echo hi (the agents: ${names})`);
      return;
    }
    this.run(text.slice(0, space), decodeTaskText(text.slice(space).trim()));
  }

  private run(agent: string, prompt: string): void {
    const id = ++this.count;
    const tag = `#${id}`;
    const controller = new AbortController();
    const screen = this.screen;
    const progress = new ProgressPrinter(agent, {
      output: this.out,
      text: writer((chunk) => screen.text(id, chunk)),
      indent: `  ${tag} `,
      ...(screen.live ? { status: (chain: readonly string[], step: string) => screen.status(id, `${tag} ${chain.join(' → ')} ▸ ${step}`) } : {}),
    });
    this.write(`task ${tag}: ${agent}: ${encodeTaskText(prompt)}`);
    screen.status(id, `${tag} ${agent} ▸ starting`);
    const ended = (): void => {
      screen.status(id, undefined);
      screen.endText(id);
    };
    const done = this.root.invoke(agent, prompt, { onProgress: progress.event, signal: controller.signal }).then(
      (result) => {
        ended();
        for (const message of result.messages) this.write(`task ${tag}: mail: ${message}`);
        if (result.success) this.write(`task ${tag} (${agent}) completed`);
        else this.write(`task ${tag} (${agent}) did not complete: ${result.error ?? (result.cancelled_by_user ? 'cancelled' : 'no reason given')}`);
      },
      async (err: unknown) => {
        ended();
        const known = err instanceof RootCallError && err.error.kind === 'unknown_agent' ? ` (the agents here: ${(await this.root.listAgents()).map((a) => a.name).join(', ')})` : '';
        this.write(`task ${tag}: ${(err as Error)?.message ?? String(err)}${known}`);
      },
    );
    const task: RunningTask = { controller, done: done.finally(() => this.running.delete(id)) };
    this.running.set(id, task);
  }

  private write(line: string): void {
    this.out.write(`chatty-gateway: ${line}\n`);
  }
}

/**
 * EIO from a terminal is the terminal gone (its SIGHUP stops serve), EPIPE the reader of a pipe
 * or socket gone: serve is unheard from then on, not broken. Anything else is thrown.
 */
function throwUnlessReaderGone(out: NodeJS.WriteStream, err: NodeJS.ErrnoException): void {
  if (err.code === 'EPIPE') return;
  if (err.code !== 'EIO' || !out.isTTY) throw err;
}

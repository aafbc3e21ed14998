import { Command, InvalidArgumentError, Option } from 'commander';
import { AGENT_KIND_NAMES, DEFAULT_AGENT_KIND } from '../agents/kinds.js';
import { EngineIdleMsError, parseEngineIdleMs } from '../compose/engine-idle.js';
import { packageVersion } from './version.js';

// Each command's module is imported when the command runs: help, the version and usage errors
// answer without loading the gateway, the plugin runtime or componentize-js.

/** Where an action leaves its exit code: commander's actions return nothing it passes on. */
export interface Outcome {
  code: number;
}

/**
 * The command tree. Every command gets `-h/--help` from commander; parse errors are thrown
 * (`exitOverride`) so `main` decides the exit code, and print `chatty-gateway: <error>` followed
 * by the usage line of the command that was being parsed.
 */
export function buildProgram(outcome: Outcome): Command {
  const program = new Command('chatty-gateway')
    .description('An MCP gateway for WebAssembly plugins on an owner-only Unix socket.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', 'print the help of a command')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`chatty-gateway: ${text.replace(/^error: /, '')}`) });

  program
    .command('serve')
    .description('serve the gateway on an owner-only Unix socket until Ctrl-C or SIGTERM')
    .option('--modules-dir <dir>', 'the folder that holds plugin directories (default: the bundled examples)')
    .option('--runtime-dir <dir>', 'where gateway.sock, gateway.token and edge.log go (owner-only, 0700)')
    .option('--json', 'print one JSON ready line on stdout instead of the banner')
    .option('--remote-runner <url>', 'forward modules with execution_mode = "remote" to this A2A runner (its token: $CHATTY_REMOTE_RUNNER_TOKEN)', parseRunnerUrl)
    .option('--agent <name=command>', 'publish another agent: COMMAND (run by /bin/sh -c) is its worker, on fd 3 (repeatable)', collectAgent)
    .option('--no-bundled-agents', 'do not publish the bundled agents (local-coder, local-reviewer)')
    .addOption(new Option('--approvals <mode>', 'answer approvals: prompt on the terminal, deny or allow all (default: prompt on a TTY, else deny)').choices(['prompt', 'deny', 'allow']))
    .option('--approvals-file <path>', 'where "always" approval rules are kept (default: $XDG_CONFIG_HOME/chatty/approvals.json or the user config dir)')
    .option('--watch', 'serve changes to --modules-dir as they happen: plugin folders added, removed or changed, and JavaScript sources rebuilt')
    .option('--engine-idle-ms <ms>', "stop a plugin's engine (its worker thread) this long after its last call; its next call starts it again; 0 keeps every engine running from the load (default: 300000, 5 min)", parseIdleMs)
    .action(
      async (flags: { modulesDir?: string; runtimeDir?: string; json?: boolean; remoteRunner?: string; agent?: { name: string; command: string }[]; bundledAgents: boolean; approvals?: 'prompt' | 'deny' | 'allow'; approvalsFile?: string; watch?: boolean; engineIdleMs?: number }) => {
        const { runServe } = await import('./commands/serve.js');
        outcome.code = await runServe({
          modulesDir: flags.modulesDir,
          runtimeDir: flags.runtimeDir,
          json: flags.json === true,
          remoteRunner: flags.remoteRunner,
          agents: flags.agent,
          bundledAgents: flags.bundledAgents,
          approvals: flags.approvals,
          approvalsFile: flags.approvalsFile,
          watch: flags.watch === true,
          engineIdleMs: flags.engineIdleMs,
        });
      },
    );

  const approvals = program.command('approvals').description('the remembered "always" approval rules: list them, revoke one');
  approvals
    .command('list')
    .description('list the rules in the approvals file')
    .option('--approvals-file <path>', 'the rules file (default: serve\'s default)')
    .option('--json', 'print {file, rules} as one JSON line')
    .action(async (flags: { approvalsFile?: string; json?: boolean }) => {
      const { runApprovalsList } = await import('./commands/approvals.js');
      outcome.code = runApprovalsList({ file: flags.approvalsFile, json: flags.json === true });
    });
  approvals
    .command('revoke')
    .description('remove the rule with this id from the approvals file')
    .argument('<id>', 'the rule id, as `approvals list` shows it')
    .option('--approvals-file <path>', 'the rules file (default: serve\'s default)')
    .action(async (id: string, flags: { approvalsFile?: string }) => {
      const { runApprovalsRevoke } = await import('./commands/approvals.js');
      outcome.code = runApprovalsRevoke(id, { file: flags.approvalsFile });
    });

  program
    .command('mcp-stdio')
    .description("relay MCP over this process's stdio to a module of the running gateway")
    .argument('<module>', 'the module to reach, as served at /mcp/<module>')
    .option('--runtime-dir <dir>', 'the running gateway\'s runtime directory (default: serve\'s default)')
    .action(async (module: string, flags: { runtimeDir?: string }) => {
      const { runMcpStdio } = await import('./commands/mcp-stdio.js');
      outcome.code = await runMcpStdio({ module, runtimeDir: flags.runtimeDir });
    });

  program
    .command('run')
    .description('run one task on an agent (a broker and the bundled agents in this process), approvals on the terminal')
    .argument('<agent>', 'the agent, e.g. local-coder')
    .argument('<prompt...>', 'the task text (its words joined by spaces), e.g. "exec echo hi"')
    .addOption(new Option('--approvals <mode>', 'answer approvals: prompt on the terminal, deny or allow all (default: prompt on a TTY, else deny)').choices(['prompt', 'deny', 'allow']))
    .option('--json', 'print the agent.invoke result object on stdout instead of the text')
    .action(async (agent: string, prompt: string[], flags: { approvals?: 'prompt' | 'deny' | 'allow'; json?: boolean }) => {
      const { runRun } = await import('./commands/run.js');
      outcome.code = await runRun({ agent, prompt: prompt.join(' '), approvals: flags.approvals, json: flags.json === true });
    });

  program
    .command('worker')
    .description('the worker program a broker spawns: one task on the socket at --participant-fd')
    .option('--participant-fd <fd>', 'the descriptor of its end of the socketpair', parseFd, 3)
    .addOption(new Option('--agent <kind>', 'the agent to run: the scripted reference agent or the LLM agent').choices(AGENT_KIND_NAMES).default(DEFAULT_AGENT_KIND))
    .action(async (flags: { participantFd: number; agent: string }) => {
      const { runWorker } = await import('./commands/worker.js');
      outcome.code = await runWorker({ participantFd: flags.participantFd, agent: flags.agent });
    });

  const plugin = program.command('plugin').description('write plugins: start one from the template, build one, grant one what it asks for');
  plugin
    .command('new')
    .description('copy the plugin template to <path> (a name, or a path whose last part is the name)')
    .argument('<path>', 'the new plugin directory, e.g. hello-tools or ./plugins/hello')
    .option('--dir <parent>', 'the folder to create it in (default: here)')
    .action(async (path: string, flags: { dir?: string }) => {
      const { runPluginNew } = await import('./commands/plugin.js');
      outcome.code = await runPluginNew(path, flags.dir);
    });
  plugin
    .command('build')
    .description("build <dir>'s JavaScript into the WebAssembly component its module.toml names")
    .argument('<dir>', 'the plugin directory (the one with module.toml)')
    .action(async (dir: string) => {
      const { runPluginBuild } = await import('./commands/plugin.js');
      outcome.code = await runPluginBuild(dir);
    });

  plugin
    .command('grant')
    .description('grant module <name> what it asks for (file, network), pinned to its component as built now; remembered beside the approval rules')
    .argument('<name>', 'the module name its module.toml declares')
    .option('--modules-dir <dir>', 'the folder serve serves (default: the bundled examples as built)')
    .option('--approvals-file <path>', "as given to serve: the grants file is plugin-grants.json beside it (default: serve's default)")
    .option('--json', 'print what was found and granted as one JSON line')
    .action(async (name: string, flags: { modulesDir?: string; approvalsFile?: string; json?: boolean }) => {
      const { runPluginGrant } = await import('./commands/plugin.js');
      outcome.code = await runPluginGrant(name, { modulesDir: flags.modulesDir, approvalsFile: flags.approvalsFile, json: flags.json === true });
    });

  showUsageAfterErrors(program);
  return program;
}

/** A descriptor number for `worker --participant-fd`. */
function parseFd(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('a descriptor is a number, e.g. 3');
  return Number(value);
}

/** The bundled agents' names (`main/agents/bundled.ts`), kept here so a usage error answers without loading the agents. */
const BUNDLED_NAMES = ['local-coder', 'local-reviewer'];

/**
 * `serve --agent NAME=COMMAND`, repeatable: NAME as the broker takes an agent name (a letter or
 * digit, then letters, digits, `.`, `_`, `-`; not `root`), not one already published; COMMAND not empty.
 */
function collectAgent(value: string, previous: { name: string; command: string }[] = []): { name: string; command: string }[] {
  const eq = value.indexOf('=');
  if (eq < 0) throw new InvalidArgumentError('give it as NAME=COMMAND, e.g. helper="node helper.js"');
  const name = value.slice(0, eq);
  const command = value.slice(eq + 1);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || name === 'root') {
    throw new InvalidArgumentError(`'${name}' is not an agent name (a letter or digit, then letters, digits, '.', '_' or '-'; not 'root')`);
  }
  if (BUNDLED_NAMES.includes(name) || previous.some((a) => a.name === name)) throw new InvalidArgumentError(`an agent named '${name}' is already published`);
  if (command.trim() === '') throw new InvalidArgumentError(`the agent '${name}' has no command`);
  return [...previous, { name, command }];
}

/** `serve --engine-idle-ms`: the registry's `engineIdleMs`, refused in its words (commander names the flag and the value). */
function parseIdleMs(value: string): number {
  try {
    return parseEngineIdleMs(value, '--engine-idle-ms');
  } catch (err) {
    if (err instanceof EngineIdleMsError) throw new InvalidArgumentError(`the idle time must be ${err.rule}`);
    throw err;
  }
}

/** `serve --remote-runner`: an http(s) URL without credentials (the token comes from the environment). */
function parseRunnerUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('the remote runner is a URL, e.g. https://runner.example');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('the remote runner URL must be http: or https:');
  if (url.username !== '' || url.password !== '') throw new InvalidArgumentError('put the token in CHATTY_REMOTE_RUNNER_TOKEN, not in the URL');
  if (url.search !== '' || url.hash !== '') throw new InvalidArgumentError('the remote runner URL takes no query or fragment');
  return value;
}

/** After a parse error each command prints its own usage line and where the full help is. */
function showUsageAfterErrors(command: Command): void {
  const usage = command.createHelp().commandUsage(command);
  command.showHelpAfterError(`usage: ${usage}\n(${commandPath(command)} --help for more)`);
  for (const sub of command.commands) showUsageAfterErrors(sub);
}

function commandPath(command: Command): string {
  return command.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name();
}

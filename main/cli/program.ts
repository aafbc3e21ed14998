import { Command } from 'commander';
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
    .action(async (flags: { modulesDir?: string; runtimeDir?: string; json?: boolean }) => {
      const { runServe } = await import('./commands/serve.js');
      outcome.code = await runServe({ modulesDir: flags.modulesDir, runtimeDir: flags.runtimeDir, json: flags.json === true });
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

  const plugin = program.command('plugin').description('write plugins: start one from the template, build one');
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

  showUsageAfterErrors(program);
  return program;
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

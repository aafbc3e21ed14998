import { parseArgs } from 'node:util';
import { runMcpStdio } from './commands/mcp-stdio.js';
import { runPluginCommand } from './commands/plugin.js';
import { runServe } from './commands/serve.js';

const USAGE = `usage: chatty-gateway <command>

commands:
  serve [--modules-dir DIR] [--runtime-dir DIR] [--json]
                        serve the gateway on an owner-only Unix socket
  plugin new <name>     start a plugin from the template
  plugin build <dir>    build a plugin directory into a WebAssembly component
`;

/** Runs one command and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return runServe(rest);
    case 'plugin':
      return runPluginCommand(rest);
    case 'mcp-stdio': {
      // Temporary, until the commander-based CLI routes `mcp-stdio <module> [--runtime-dir DIR]`.
      let parsed;
      try {
        parsed = parseArgs({ args: [...rest], options: { 'runtime-dir': { type: 'string' } }, allowPositionals: true, strict: true });
      } catch (err) {
        process.stderr.write(`chatty-gateway: ${err instanceof Error ? err.message : String(err)}\nusage: chatty-gateway mcp-stdio <module> [--runtime-dir DIR]\n`);
        return 2;
      }
      const [module, ...extra] = parsed.positionals;
      if (module === undefined || extra.length > 0) {
        process.stderr.write('usage: chatty-gateway mcp-stdio <module> [--runtime-dir DIR]\n');
        return 2;
      }
      return runMcpStdio({ module, runtimeDir: parsed.values['runtime-dir'] });
    }
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`chatty-gateway: unknown command '${command}'\n${USAGE}`);
      return 2;
  }
}

/** A failure a user can act on is one line on stderr, never a stack trace. */
export function failure(err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`chatty-gateway: ${message}\n`);
  return 1;
}

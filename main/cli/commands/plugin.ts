import { relative } from 'node:path';
import { buildPlugin, newPlugin } from '../../plugins/build/index.js';

const USAGE = `usage:
  chatty-gateway plugin new <name> [--dir <parent>]   copy the plugin template to <parent>/<name> (default: here)
  chatty-gateway plugin build <dir>                   build <dir>'s JavaScript into the component its module.toml names
`;

/** `chatty-gateway plugin new <name> | build <dir>`. */
export async function runPluginCommand(args: readonly string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === 'new') {
      const { positional, dir } = parseDirFlag(rest);
      if (positional.length !== 1) return usage('plugin new takes one name');
      const target = await newPlugin(positional[0]!, dir ?? process.cwd());
      const shown = relative(process.cwd(), target) || '.';
      process.stdout.write(
        `created ${target}\n\nnext:\n  edit ${shown}/src/plugin.js\n  chatty-gateway plugin build ${shown}\n` +
          `  chatty-gateway serve --modules-dir ${relative(process.cwd(), `${target}/..`) || '.'}\n`,
      );
      return 0;
    }
    if (sub === 'build') {
      if (rest.length !== 1) return usage('plugin build takes one directory');
      process.stderr.write(`building ${rest[0]} with componentize-js…\n`);
      const result = await buildPlugin(rest[0]!);
      process.stdout.write(`built ${result.wasmPath} (${(result.bytes / (1024 * 1024)).toFixed(1)} MiB in ${(result.ms / 1000).toFixed(1)} s)\n`);
      return 0;
    }
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
      process.stdout.write(USAGE);
      return sub === undefined ? 2 : 0;
    }
    return usage(`unknown plugin command '${sub}'`);
  } catch (err) {
    process.stderr.write(`chatty-gateway plugin ${sub}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

function usage(problem: string): number {
  process.stderr.write(`chatty-gateway plugin: ${problem}\n${USAGE}`);
  return 2;
}

function parseDirFlag(args: readonly string[]): { positional: string[]; dir: string | undefined } {
  const positional: string[] = [];
  let dir: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--dir') dir = args[++i];
    else if (arg.startsWith('--dir=')) dir = arg.slice('--dir='.length);
    else positional.push(arg);
  }
  return { positional, dir };
}

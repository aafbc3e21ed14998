import { dirname, relative } from 'node:path';
import { buildPlugin, newPlugin } from '../../plugins/build/index.js';
import { shellWord } from '../shell-word.js';

/** `chatty-gateway plugin new <path> [--dir <parent>]`: the template copied, and what to run next. */
export async function runPluginNew(path: string, parent: string | undefined): Promise<number> {
  try {
    const target = await newPlugin(path, parent ?? process.cwd());
    // Commands that run as printed, from here: paths relative to the working directory, quoted
    // for the shell when they need it.
    const here = (path: string): string => relative(process.cwd(), path) || '.';
    process.stdout.write(
      `created ${target}\n\nnext:\n` +
        `  edit ${shellWord(`${here(target)}/src/plugin.js`)}\n` +
        `  npx chatty-gateway plugin build ${shellWord(here(target))}\n` +
        `  npx chatty-gateway serve --modules-dir ${shellWord(here(dirname(target)))}\n`,
    );
    return 0;
  } catch (err) {
    return pluginFailure('new', err);
  }
}

/** `chatty-gateway plugin build <dir>`. */
export async function runPluginBuild(dir: string): Promise<number> {
  try {
    // Said once the checks have passed: a directory that is no plugin is one line, not two.
    const result = await buildPlugin(dir, { onBuilding: () => process.stderr.write(`building ${dir} with componentize-js…\n`) });
    process.stdout.write(`built ${result.wasmPath} (${(result.bytes / (1024 * 1024)).toFixed(1)} MiB in ${(result.ms / 1000).toFixed(1)} s)\n`);
    return 0;
  } catch (err) {
    return pluginFailure('build', err);
  }
}

function pluginFailure(sub: string, err: unknown): number {
  process.stderr.write(`chatty-gateway plugin ${sub}: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

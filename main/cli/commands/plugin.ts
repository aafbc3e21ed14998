import { dirname, join, relative } from 'node:path';
import { defaultApprovalsFile } from '../../broker/index.js';
import { userCacheDir } from '../../owner-only/index.js';
import { buildPlugin, newPlugin } from '../../plugins/build/index.js';
import { visibleLine } from '../../plugins/visible-lines.js';
import { GrantsFile, grantsFileBeside, moduleAsks, sameAsk } from '../../plugins/grants/index.js';
import { failure } from '../failure.js';
import { shellWord } from '../shell-word.js';
import { describeGrant, grantDetails, shownOneLine } from '../terminal-root/index.js';

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

/**
 * The failure as visible lines: a build's message quotes the plugin's own text (the source check
 * quotes it; componentize-js and wizer quote source lines as they are), so each line is escaped
 * (`visibleLine`: controls, bidi and hidden characters) and every line after the first indented,
 * so none reads as a line of this command's (`chatty-gateway plugin build: built …`).
 */
function pluginFailure(sub: string, err: unknown): number {
  const [first, ...rest] = (err instanceof Error ? err.message : String(err)).split(/\r?\n/).map(visibleLine);
  const more = rest.map((line) => (line.startsWith('  ') ? line : `  ${line}`));
  process.stderr.write(`${[`chatty-gateway plugin ${sub}: ${first}`, ...more].join('\n')}\n`);
  return 1;
}

export interface PluginGrantOptions {
  /** `--modules-dir DIR`: the folder `serve` serves (default: the bundled examples' built copies). */
  modulesDir?: string | undefined;
  /** `--approvals-file PATH`, as given to `serve`: the grants file is `plugin-grants.json` beside it. */
  approvalsFile?: string | undefined;
  json: boolean;
}

/**
 * `chatty-gateway plugin grant NAME`: shows what module NAME (found in the modules folder by the
 * name its module.toml declares) asks for, and records the grant for its component as it is now
 * (its digest) in the grants file `serve` reads. Typing the command is the person's yes; a
 * rebuilt component (a new digest) is asked for again.
 */
export async function runPluginGrant(name: string, options: PluginGrantOptions): Promise<number> {
  const modulesDir = options.modulesDir ?? join(userCacheDir(), 'chatty-gateway', 'examples', 'modules');
  const path = grantsFileBeside(options.approvalsFile ?? defaultApprovalsFile());
  try {
    const found = await moduleAsks(modulesDir, name);
    const file = new GrantsFile(path);
    const had = file.grantedTo(found.name, found.digest);
    const fresh = found.asks.filter((ask) => !had.some((h) => sameAsk(h, ask)));
    if (fresh.length > 0) file.remember(found.name, found.digest, found.asks);
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ plugin: found.name, version: found.version, dir: found.dir, digest: found.digest, asks: found.asks, granted: fresh, file: path })}\n`);
      return 0;
    }
    const request = { id: 'cli', plugin: found.name, version: found.version, digest: found.digest, asks: found.asks };
    const lines =
      found.asks.length === 0
        ? [`plugin ${shownOneLine(found.name)} ${shownOneLine(found.version)} asks for nothing that needs a grant (logging and config are always allowed)`]
        : [
            describeGrant(request),
            ...grantDetails(request),
            fresh.length === 0
              ? `already granted for this digest in ${path}`
              : `granted, remembered in ${path}: a running serve that waits for it serves it within a second or two`,
          ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } catch (err) {
    return failure(err);
  }
}


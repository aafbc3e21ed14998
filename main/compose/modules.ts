import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildInChildProcess } from '../plugins/build/index.js';
import { PluginGrantError } from '../plugins/grants/index.js';
import {
  examplesDir,
  ensureExamplesBuilt,
  ModuleRegistry,
  type EnsureExamplesOptions,
  type ModuleRegistryOptions,
  type PluginLogger,
  type ScanReport,
} from '../plugins/index.js';

export interface OpenModulesOptions {
  /**
   * Where progress and the plugins' own messages (a module not loaded, a clamped limit, a
   * plugin's log lines) go: stderr in the CLI, since stdout is for the ready line. Without it the
   * registry's logger (`registry.logger`, else stderr) prints them.
   */
  report?: (line: string) => void;
  registry?: ModuleRegistryOptions;
  /** The remote runner's URL, when one is set: a remote module is then reported as forwarded to it. */
  remoteRunner?: string | undefined;
  /**
   * Build the bundled examples in the background (`serve`): the examples already built are
   * loaded before this resolves; each one still to build is listed as building
   * (`registry.pending()`), then loaded as soon as it is built, and `onModule` hears of it
   * (served, or failed with the reason: a failed build never throws). Without it every example
   * is built before this resolves. Aborting `stop` stops the build under way (its child process
   * and wizer with it) and leaves the rest unbuilt, with nothing said: `serve` is stopping.
   */
  background?: { onModule?: (event: ModuleEvent) => void; stop?: AbortSignal } | undefined;
  /**
   * Where the bundled examples come from and are built (defaults: the package's examples, the
   * user cache), and what builds one (default: `plugin build` in a child process,
   * `buildInChildProcess`, so the caller's event loop keeps turning; tests pass their own).
   */
  examples?: Pick<EnsureExamplesOptions, 'cacheDir' | 'build'> & { source?: string };
}

/** A bundled example that was built in the background: now served, or failed with `reason`. */
export type ModuleEvent = { name: string; state: 'served' } | { name: string; state: 'failed'; reason: string };

export interface OpenedModules {
  registry: ModuleRegistry;
  scan: ScanReport;
  /** Resolves once every background build has ended (at once without `background`); it never rejects. */
  built: Promise<void>;
}

/**
 * Opens the modules to serve: those in `modulesDir`, else the bundled examples (built with
 * componentize-js on first use, then cached). Shared by the headless CLI and the desktop app so
 * both serve the same thing. A bad module is reported and skipped; it never stops the others.
 */
export async function openModules(modulesDir?: string, options: OpenModulesOptions = {}): Promise<OpenedModules> {
  const report = options.report ?? (() => {});
  if (modulesDir !== undefined) assertDirectory(modulesDir);
  const deferred: { name: string; build: () => Promise<string> }[] = [];
  const examples = options.examples ?? {};
  const stop = options.background?.stop;
  const dir =
    modulesDir ??
    (await ensureExamplesBuilt(examples.source, {
      onProgress: report,
      ...(examples.cacheDir !== undefined ? { cacheDir: examples.cacheDir } : {}),
      build: examples.build ?? ((exampleDir: string) => buildInChildProcess(exampleDir, stop ? { signal: stop } : {})),
      ...(options.background ? { defer: (name: string, build: () => Promise<string>) => deferred.push({ name, build }) } : {}),
    }));
  // The registry already logs every load failure and clamp warning; they reach the user through
  // its logger and only through it, so each is said once.
  const logger = options.registry?.logger ?? (options.report ? reportingLogger(options.report) : undefined);
  // The bundled examples come with their plugins.lock (pinned to their sources: docs/plugins.md, "Grants").
  const grants = options.registry?.grants && modulesDir === undefined ? { ...options.registry.grants, locks: [...(options.registry.grants.locks ?? []), bundledExamplesLock(examples.source)], trustedBuilds: [...(options.registry.grants.trustedBuilds ?? []), dir] } : options.registry?.grants;
  const registry = new ModuleRegistry({ ...options.registry, ...(grants ? { grants } : {}), ...(logger ? { logger } : {}) });
  try {
    const scan = await registry.scanDirectory(dir);
    // The one thing the registry does not log: a module it leaves to another runner.
    for (const remote of scan.remote) report(remoteModuleLine(remote, options.remoteRunner));
    for (const { name } of deferred) registry.building(name);
    const built = buildInTurn(registry, deferred, report, options.background?.onModule ?? (() => {}), stop);
    return { registry, scan, built };
  } catch (err) {
    await registry.close();
    throw err;
  }
}

/**
 * Builds and loads each deferred example in turn (builds are CPU-heavy and serialised anyway).
 * A failure is the module's, said once and kept as its state; it never reaches the caller. Once
 * `stop` is aborted nothing more is built, loaded or said.
 */
async function buildInTurn(registry: ModuleRegistry, deferred: readonly { name: string; build: () => Promise<string> }[], report: (line: string) => void, onModule: (event: ModuleEvent) => void, stop: AbortSignal | undefined): Promise<void> {
  for (const { name, build } of deferred) {
    if (stop?.aborted) return;
    try {
      const dir = await build();
      if (stop?.aborted) return;
      await registry.loadModule(dir);
      report(`module ${name} is built and served: /mcp/${name}`);
      onModule({ name, state: 'served' });
    } catch (err) {
      if (stop?.aborted) return; // stopped, not failed: the next start builds it again
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof PluginGrantError) {
        // Built, but waiting for (or refused) a grant: the registry lists it as ungranted, with how to give it.
        report(`module ${name} is built but not served: ${reason}`);
        continue;
      }
      registry.buildFailed(name, reason);
      report(`warning: module ${name} is not served: its build failed: ${reason}`);
      onModule({ name, state: 'failed', reason });
    }
  }
}

/** What becomes of a remote module: forwarded to the runner, or answered 503 until one is set. */
export function remoteModuleLine(remote: { name: string; executionMode: string }, runner: string | undefined): string {
  const where = `module ${remote.name} is remote (${remote.executionMode})`;
  if (runner !== undefined) return `${where}: forwarded to the remote runner at ${runner} (POST /a2a/${remote.name})`;
  return `${where}: no remote runner is set, so POST /a2a/${remote.name} answers 503`;
}

/** The registry's messages as report lines: `warning: module echo: …`. Debug lines are dropped, as on stderr. */
function reportingLogger(report: (line: string) => void): PluginLogger {
  return {
    log(level, message, fields) {
      if (level === 'debug') return;
      const module = fields?.['module'];
      report(`${level === 'warn' ? 'warning' : level}: ${module !== undefined ? `module ${String(module)}: ` : ''}${message}`);
    },
  };
}

/** A modules directory the user named must exist: serving nothing by mistake helps no one. */
function assertDirectory(dir: string): void {
  const path = resolve(dir);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    throw new Error(`modules directory ${path} does not exist`);
  }
  if (!isDirectory) throw new Error(`modules directory ${path} is not a directory`);
}

/** The `plugins.lock` shipped beside the bundled examples (or beside `source`, their stand-in in tests). */
export function bundledExamplesLock(source: string = examplesDir()): string {
  return join(source, 'plugins.lock');
}

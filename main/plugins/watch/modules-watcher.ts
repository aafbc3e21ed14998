import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { messageOf } from '../errors.js';
import { PluginGrantError } from '../grants/index.js';
import type { ModuleRegistry } from '../registry.js';
import { buildInChildProcess } from '../build/index.js';
import { buildDue, changed, lookAt, mtimeOf, type FolderLook } from './plugin-folder.js';
import { nameSkeleton } from '../name-skeleton.js';
import { visibleLine } from '../visible-lines.js';
import { MAX_WATCHED_FOLDERS, TreeWatch } from './tree-watch.js';

/** The longest the watcher looks at folders back to back before the event loop gets a turn. */
const SETTLE_SLICE_MS = 5;

/** Quiet time after the last event of a burst before the folder is looked at again. */
export const WATCH_DEBOUNCE_MS = 150;
/** The longest a burst is waited out: a folder written to without pause (a log, a plugin's data) never holds the others back longer. */
export const WATCH_MAX_WAIT_MS = 1_000;

export interface ModulesWatcherOptions {
  /** One line per change (`module echo: reloaded (plugin.wasm changed)`). */
  say: (line: string) => void;
  /**
   * Builds a plugin folder's JavaScript into its component (default: `plugin build` in a child
   * process, `buildInChildProcess`, stopped after `buildTimeoutMs` or when the watcher closes).
   */
  build?: (dir: string) => Promise<unknown>;
  /** How long the default build may take (default `BUILD_TIMEOUT_MS`, 5 min). */
  buildTimeoutMs?: number;
  debounceMs?: number;
  /** The longest a burst is waited out before its folders are looked at (default `WATCH_MAX_WAIT_MS`). */
  maxWaitMs?: number;
  /**
   * When the scan that served the folders began (ms since the epoch): a `module.toml` or component
   * written since is taken as changed when the watch starts, so an edit or a `plugin build` made
   * while the scan ran (before the watch began) is not missed. Default: none is.
   */
  changedSince?: number;
  /** Hears each folder's change once it has taken effect (tests). */
  onSettled?: (folder: string) => void;
}

/** What the watcher knows of one plugin folder: how it looked last, and the module name it holds (served, or waiting for a grant). */
interface Known {
  look: FolderLook;
  module: string | undefined;
  /** The newest source a build failed on: not built again until a source is newer. */
  failedBuildMs?: number;
}

/**
 * Watches a modules directory (`serve --watch`) and keeps the registry in step with it, without a
 * restart: a plugin folder added is loaded, one removed is unloaded (its calls in flight finish),
 * a changed `module.toml` or component reloads it (`ModuleRegistry.reload`: the old instance
 * keeps serving if the new one fails), and a plugin written in JavaScript whose sources changed
 * is rebuilt first (`plugin build`), then reloaded.
 *
 * Events are only a hint of where to look: after a burst settles (`debounceMs`), each folder
 * named is looked at again and compared with how it looked, so a missed, doubled or odd event
 * (an editor's save-by-rename, a file that vanished) never does the wrong thing. Folders are
 * handled one at a time, in the order their events came.
 */
export class ModulesWatcher {
  private readonly root: string;
  private readonly known = new Map<string, Known>();
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** When the first event not yet settled came. */
  private burstSince: number | undefined;
  private running: Promise<void> | undefined;
  private watcher: TreeWatch | undefined;
  private closed = false;
  /** Stops the build in progress when the watcher closes. */
  private readonly stopBuilds = new AbortController();

  private readonly options: ModulesWatcherOptions;

  constructor(
    private readonly registry: ModuleRegistry,
    dir: string,
    options: ModulesWatcherOptions,
  ) {
    this.root = resolve(dir);
    // Each line one visible line, as the registry's (visible-lines.ts): a planted folder's name
    // (`x\nchatty-gateway: module echo: granted …`) is shown escaped, never a line of its own.
    this.options = { ...options, say: (line) => options.say(visibleLine(line)) };
  }

  /** Notes how each folder looks now (what the first scan served) and starts watching. */
  start(): this {
    const served = new Map<string, string>();
    for (const m of [...this.registry.list(), ...this.registry.remoteModules()]) served.set(resolve(m.dir), m.name);
    for (const folder of this.folders()) {
      const look = lookAt(join(this.root, folder));
      if (!look) continue;
      const written = this.options.changedSince !== undefined && writtenSince(join(this.root, folder), look, this.options.changedSince);
      // Written while the scan ran: known as it looked before (unknown), so that it is settled as a change.
      this.known.set(folder, { look: written ? { ...look, manifest: '' } : look, module: served.get(join(this.root, folder)) });
      if (written) this.due.add(folder);
      // A plugin whose component is missing or older than its sources is built now, as a first edit would.
      if (buildDue(join(this.root, folder), look) !== undefined) this.due.add(folder);
    }
    this.watcher = new TreeWatch(this.root, {
      heard: (path) => this.heard(path),
      failed: (err) => this.stopWatching(messageOf(err)),
      full: () => this.options.say(`warning: watching the first ${MAX_WATCHED_FOLDERS} folders of ${this.root} only: changes in the others are seen once a restart (or a change beside them) looks again`),
    });
    if (this.due.size > 0) this.drain();
    return this;
  }

  /**
   * The watch cannot go on (the modules directory itself was removed or moved, or the platform
   * gave up on it): said in one line, never thrown. What it served keeps serving: a directory
   * moved away is not a request to unload everything.
   */
  private stopWatching(why: string): void {
    if (this.closed) return;
    this.stopEvents();
    this.options.say(`warning: no longer watching ${this.root}: ${why}; the modules it served keep serving`);
  }

  /** Stops watching and any build under way; resolves once the change being made (a reload) has ended. */
  async close(): Promise<void> {
    this.stopEvents();
    this.stopBuilds.abort();
    await this.running;
  }

  /** No more events, and none of those heard is settled. */
  private stopEvents(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.due.clear();
    this.watcher?.close();
  }

  private heard(filename: string | Buffer | null): void {
    if (this.closed) return;
    const name = filename === null ? undefined : filename.toString();
    const folder = name?.split(sep)[0];
    if (folder === undefined || folder === '') {
      // No name given: every folder, those known and those there now.
      for (const f of [...this.known.keys(), ...this.folders()]) this.due.add(f);
    } else {
      this.due.add(folder);
    }
    clearTimeout(this.timer);
    const now = performance.now();
    this.burstSince ??= now;
    const quiet = this.options.debounceMs ?? WATCH_DEBOUNCE_MS;
    const latest = this.burstSince + (this.options.maxWaitMs ?? WATCH_MAX_WAIT_MS) - now;
    this.timer = setTimeout(() => this.drain(), Math.max(0, Math.min(quiet, latest)));
  }

  private drain(): void {
    this.burstSince = undefined;
    if (this.running || this.closed) return;
    if (!isDirectory(this.root)) return this.stopWatching('it is gone');
    this.running = (async () => {
      let since = performance.now();
      while (this.due.size > 0 && !this.closed) {
        // A look that finds nothing to do never awaits: thousands in a row would hold the loop.
        if (performance.now() - since > SETTLE_SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          since = performance.now();
        }
        const [folder] = this.due;
        this.due.delete(folder!);
        try {
          await this.settle(folder!);
        } catch (err) {
          // Whatever a folder does (vanish mid-look, an unreadable file), the watcher goes on.
          this.options.say(`warning: module folder ${folder}: ${messageOf(err)}`);
        }
        this.options.onSettled?.(folder!);
      }
    })().finally(() => {
      this.running = undefined;
      if (this.due.size > 0 && !this.closed) this.drain();
    });
  }

  /** Brings one folder's module in step with how the folder looks now. */
  private async settle(folder: string): Promise<void> {
    const dir = join(this.root, folder);
    const was = this.known.get(folder);
    // The registry is the truth of what this folder serves (a grant given since may have served it).
    const served = this.servedFrom(dir);
    const held = served ?? was?.module;
    // The scan serves real folders only: a symbolic link (to a folder anywhere) is not served here either.
    const linked = isSymbolicLink(dir);
    let look = linked ? undefined : lookAt(dir);
    if (look === undefined) {
      if (linked && !was && existsSync(join(dir, 'module.toml'))) this.options.say(`warning: module folder ${folder} is a symbolic link: not served (only real folders in the modules directory are, as at start)`);
      if (!was) return;
      this.known.delete(folder);
      if (held !== undefined && (await this.registry.unload(held, { finishCalls: true }))) {
        const why = linked ? 'is now a symbolic link: unloaded (only real folders in the modules directory are served, as at start)' : 'is gone: unloaded';
        this.options.say(`module ${held}: its folder ${folder} ${why}`);
        this.lookAgainAtHoldersOf(held, folder);
      }
      return;
    }
    const due = buildDue(dir, look, was?.failedBuildMs);
    /** Said before what the reload did: `rebuilt in 12.3 s (src/plugin.js changed)`. */
    let rebuilt: string | undefined;
    if (due !== undefined) {
      const started = performance.now();
      try {
        await (this.options.build ?? ((d: string) => buildInChildProcess(d, { timeoutMs: this.options.buildTimeoutMs, signal: this.stopBuilds.signal })))(dir);
      } catch (err) {
        if (this.closed) return; // stopped because the watch ended: nothing to say
        this.known.set(folder, { look: was?.look ?? look, module: held, failedBuildMs: due.newestMs });
        const keeps = served !== undefined ? '; the previous build keeps serving' : '';
        this.options.say(`warning: module ${look.name ?? folder}: rebuild failed (${due.why}): ${oneLine(messageOf(err))}${keeps}`);
        return;
      }
      rebuilt = `rebuilt in ${((performance.now() - started) / 1000).toFixed(1)} s (${due.why})`;
      look = lookAt(dir) ?? look;
    }
    if (was && !changed(was.look, look) && rebuilt === undefined) return;
    const rebuiltAnd = rebuilt === undefined ? '' : `${rebuilt} and `;
    this.known.set(folder, { look, module: held });
    // A module.toml that does not parse (no name) is a reload that fails: the old instance serves on.
    if (served !== undefined && (look.name === served || look.name === undefined)) {
      const what = rebuilt !== undefined ? '' : was?.look.manifest === '' ? ' (changed while the scan ran)' : was && was.look.manifest !== look.manifest ? ' (module.toml changed)' : ' (its component changed)';
      try {
        await this.registry.reload(served);
      } catch (err) {
        // The registry said why, in one line; the old instance serves on. A change that waits for
        // a grant (a rebuild is a new digest; a new ask in module.toml) is no failure: say so.
        if (err instanceof PluginGrantError) {
          this.options.say(rebuilt !== undefined
            ? `module ${served}: ${rebuilt}; the new build waits for a grant, and the previous build keeps serving until it is granted`
            : `module ${served}: not reloaded yet${what}: it waits for a grant; the previous instance keeps serving until it is granted`);
        }
        return;
      }
      this.options.say(`module ${served}: ${rebuiltAnd}reloaded${what}`);
      return;
    }
    // New here, renamed in its module.toml, or not served yet (its load failed, or waits for a grant): loaded afresh.
    const renamed = held !== undefined && look.name !== held;
    const owner = look.name === undefined ? undefined : this.servedDir(look.name);
    if (renamed && served !== undefined && owner !== undefined && owner !== dir) {
      // Renamed onto a name another folder serves: the load would fail, so the module here keeps serving.
      this.known.set(folder, { look: was?.look ?? look, module: held });
      this.options.say(`warning: module folder ${folder}: its module.toml now names '${look.name}', which ${relative(this.root, owner) || owner} serves: refused; ${held} keeps serving`);
      return;
    }
    if (renamed && (await this.registry.unload(held, { finishCalls: true }))) this.lookAgainAtHoldersOf(held, folder);
    try {
      const loaded = await this.registry.loadModule(dir);
      this.known.set(folder, { look, module: loaded.name });
      this.options.say(`module ${loaded.name}: ${rebuiltAnd}${was ? 'loaded' : 'added'}${renamed ? ` (was ${held})` : ''}: served from ${folder}`);
    } catch (err) {
      // A module waiting for a grant keeps its name (it is served once granted); any other failure frees it.
      this.known.set(folder, { look, module: err instanceof PluginGrantError ? look.name : undefined });
      this.options.say(`warning: module folder ${folder} not served: ${oneLine(messageOf(err))}`);
    }
  }

  /**
   * Module name `released` is free again (its folder gone, or renamed): the folders refused for
   * naming it, or a look-alike of it, are looked at again, as if changed, so the first of them is
   * served without waiting for a change inside it or a restart.
   */
  private lookAgainAtHoldersOf(released: string, except: string): void {
    const folded = nameSkeleton(released);
    for (const [folder, known] of this.known) {
      if (folder === except || known.module !== undefined || known.look.name === undefined || nameSkeleton(known.look.name) !== folded) continue;
      this.known.set(folder, { ...known, look: { ...known.look, manifest: '' } });
      this.due.add(folder);
    }
  }

  /** The module (local or remote) the registry serves from `dir`, if any. */
  private servedFrom(dir: string): string | undefined {
    for (const m of [...this.registry.list(), ...this.registry.remoteModules()]) if (resolve(m.dir) === dir) return m.name;
    return undefined;
  }

  /**
   * The directory module `name` (local or remote), or one whose name differs from it only in
   * case, is served from, if it is served: the registry refuses both (`Echo` beside `echo`).
   */
  private servedDir(name: string): string | undefined {
    const folded = nameSkeleton(name);
    const m = [...this.registry.list(), ...this.registry.remoteModules()].find((served) => nameSkeleton(served.name) === folded);
    return m === undefined ? undefined : resolve(m.dir);
  }

  /** The folder names in the modules directory now (none if it cannot be read). */
  private folders(): string[] {
    try {
      return readdirSync(this.root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
  }
}

/** Whether the folder's `module.toml` or component was written at or after `since` (ms since the epoch). */
function writtenSince(dir: string, look: FolderLook, since: number): boolean {
  return [join(dir, 'module.toml'), look.wasmPath].some((path) => mtimeOf(path) >= since);
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

/** Starts a `ModulesWatcher` on `dir` for `registry`. */
export function watchModules(registry: ModuleRegistry, dir: string, options: ModulesWatcherOptions): ModulesWatcher {
  return new ModulesWatcher(registry, dir, options).start();
}

import { existsSync, statSync } from 'node:fs';
import { readdir, realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { userCacheDir } from '../owner-only/index.js';
import { buildCommand, sourcesNewerThan } from './build/build-hints.js';
import { pluginSourceIn } from './build/plugin-source.js';
import { ComponentCache } from './component-cache.js';
import { PluginLoadError, messageOf } from './errors.js';
import { RetiringHandle } from './live/retiring-handle.js';
import { WaitingBudget, checkedAnswerSpinMs, checkedEngineIdleMs, type ModuleHandle } from './handle/index.js';
import { MAX_COMPONENT_BYTES } from './limits.js';
import { DEFAULT_CEILINGS, parseManifest, type Ceilings, type Manifest, type ModuleInfo, type ParsedManifest } from './manifest.js';
import { stderrLogger, type CreditMeter, type GrantPolicy, type PluginLogger, type Providers } from './providers.js';
import type { Capability, GrantState } from './worker/protocol.js';
import { checkWorld, unversioned } from './world.js';
import { componentDigest, GrantGate, GrantStore, PluginGrantError, PluginGrants, type GateHost, type GateInput, type GrantsOptions, type ServedModule } from './grants/index.js';
import { howAlike, nameSkeleton } from './name-skeleton.js';
import { visibleLines } from './visible-lines.js';
import { isWithin, moduleRealPath, readInsideModule, readModuleManifest } from './inside-module.js';

/** Modules loaded at once by `scanDirectory` (each transpile is serialised anyway). */
const LOAD_CONCURRENCY = 4;

export interface ModuleRegistryOptions {
  /** Transpile cache (default `<user cache dir>/chatty-gateway/plugins`). */
  cacheDir?: string;
  /** The embedder's `llm` and `billing` backends; a capability without one answers "not configured". */
  providers?: Providers;
  /** Credit gate for `invokeTool`, consulted before the module's lock. */
  meter?: CreditMeter;
  logger?: PluginLogger;
  /**
   * Which capabilities a module gets beyond `logging`. Default: `config` when the manifest has a
   * `[config]` table, `file` when it has `[files] root`, `llm` and `billing` always (they still
   * answer "not configured" without a provider).
   */
  grant?: GrantPolicy;
  /**
   * Capabilities granted, not taken (docs/plugins.md, "Grants"): `file`, `llm`, `billing` and
   * `network` are given per plugin and per component digest, from the `locks`, the grants `file`,
   * or a person at `registry.grants`; a module whose asks are not all granted is not served
   * (`pending()`: `'ungranted'`). Without it (and without `grant`) every ask is given, as before.
   * Not with `grant`: that policy decides alone.
   */
  grants?: GrantsOptions;
  /** Lower host ceilings (never above 256 MiB of memory and 60 s per call), e.g. for tests. */
  ceilings?: Partial<Ceilings>;
  /**
   * JS heap (V8 old generation) per module worker, in MiB (default 256). Not the guest's linear
   * memory, which `max_memory_mb` bounds: this stops a runaway host-side allocation (a huge
   * lifted argument list, say) by ending that worker instead of the process.
   */
  workerHeapMb?: number;
  /**
   * How long a module's engine (its worker thread) stays up after its last call, in ms (default
   * 5 min); 0 starts it at the load and keeps it resident. See docs/plugins.md, "Idle plugins".
   */
  engineIdleMs?: number;
  /**
   * How long the main thread may wait, without yielding to its event loop, for the answer to a
   * module's lone call, in ms (default 0.08, or 0 on a one-CPU machine; at most 1000; 0 never
   * waits): an answer taken this way skips a thread wake-up (issue 21; docs/plugins.md, "The
   * main thread's wait for a lone call's answer").
   */
  answerSpinMs?: number;
  /**
   * The arguments (the JSON text's length) the waiting calls of all this registry's modules may
   * hold together (default `DEFAULT_TOTAL_WAITING_ARGUMENT_BYTES`, 256 MiB): a call that would take
   * them past it is refused `busy`, as one past its own module's 64 MiB. Lower it, e.g., for tests.
   */
  maxTotalWaitingArgumentBytes?: number;
}

/** A module that says `execution_mode = "remote"`/`"remote_only"`: reported, never loaded here. */
export type RemoteModule = ModuleInfo;

export interface LoadedModule {
  readonly name: string;
  readonly dir: string;
  /** Clamping and other remarks from the manifest. */
  readonly warnings: readonly string[];
  /** Whether the transpiled component came from the disk cache. */
  readonly cached: boolean;
}

export interface ScanReport {
  loaded: LoadedModule[];
  remote: RemoteModule[];
  failed: { dir: string; reason: string }[];
}

/** A module announced before it can load: being built, or whose build failed (`reason`). */
export interface PendingModule {
  readonly name: string;
  readonly state: 'building' | 'failed' | 'ungranted';
  readonly reason?: string;
}

/**
 * What changed in the registry: `served` a module came online (loaded, built in the background,
 * granted), `reloaded` its instance was swapped, `unloaded` it is gone, `pending` its pending
 * entry (building, failed, not granted) was set or changed.
 */
export type ModuleChange = { name: string; change: 'served' | 'reloaded' | 'unloaded' | 'pending' };

export type ModuleChangeListener = (change: ModuleChange) => void;

export function defaultPluginCacheDir(): string {
  return join(userCacheDir(), 'chatty-gateway', 'plugins');
}

/**
 * The plugin modules this process serves. The registry is consulted only to look a module up;
 * each module's calls run under its own `ModuleHandle`. Satisfies the gateway's `ModuleDirectory`.
 */
export class ModuleRegistry {
  private readonly handles = new Map<string, ModuleHandle>();
  private readonly remotes = new Map<string, RemoteModule>();
  /** Names taken by loaded, remote or still-loading modules, with where they came from. */
  private readonly claimed = new Map<string, string>();
  /** Modules announced as building (`building`) or failed (`buildFailed`), until `loadModule` serves them. */
  private readonly pendingByName = new Map<string, PendingModule>();
  private readonly cache: ComponentCache;
  private readonly logger: PluginLogger;
  /** The embedder's logger as it is: a guest's lines, made one visible line in their worker (`HandleInit.guestLogger`). */
  private readonly guestLogger: PluginLogger;
  private readonly ceilings: Ceilings;
  private readonly listeners = new Set<ModuleChangeListener>();
  /** Old instances a reload swapped out, finishing their calls before they close. */
  private readonly retiring = new Map<ModuleHandle, Promise<void>>();
  /** What each instance's own load was granted on (`GrantGate.served`): watched when it retires. */
  private readonly servedAs = new WeakMap<ModuleHandle, ServedModule>();
  /** The reload running for a module: reloads of one module run one after the other. */
  private readonly reloads = new Map<string, Promise<LoadedModule | RemoteModule>>();
  private closed = false;
  /** The files this registry grants from (its grants file, each plugins.lock): the gateway tags an agent's write of one `gateway-config`. */
  configFiles(): readonly string[] {
    const grants = this.options.grants;
    return [...(grants?.file !== undefined ? [grants.file] : []), ...(grants?.locks ?? [])];
  }

  /** The grant desk: a plugin's asks not yet granted for its component wait here for a person (main/plugins/grants). */
  readonly grants = new PluginGrants();
  /** Decides what each module gets when `options.grants` is set. */
  private readonly gate: GrantGate | undefined;
  /** How long each module's engine stays up after its last call, in ms (0: resident from the load), as every handle is given it. */
  readonly engineIdleMs: number;
  /** Every handle's `answerSpinMs`, checked once. */
  private readonly answerSpinMs: number;
  /** The waiting argument bytes every handle of this registry shares, against the gateway's total cap. */
  private readonly waitingBudget: WaitingBudget;

  constructor(private readonly options: ModuleRegistryOptions = {}) {
    this.cache = new ComponentCache(options.cacheDir ?? defaultPluginCacheDir());
    this.guestLogger = options.logger ?? stderrLogger;
    this.logger = visibleLines(this.guestLogger); // its lines carry what a planted folder chose
    if (options.grants && options.grant) throw new PluginLoadError('give the registry `grant` (a policy) or `grants` (grants pinned to digests), not both');
    this.gate = options.grants ? new GrantGate(new GrantStore(options.grants), this.grants, this.gateHost(), options.grants.mode) : undefined;
    this.engineIdleMs = checkedEngineIdleMs(options.engineIdleMs); // a bad value is the embedder's mistake: said now, not at each load
    this.answerSpinMs = checkedAnswerSpinMs(options.answerSpinMs);
    this.waitingBudget = new WaitingBudget(options.maxTotalWaitingArgumentBytes);
    this.ceilings = {
      maxMemoryMb: Math.min(options.ceilings?.maxMemoryMb ?? DEFAULT_CEILINGS.maxMemoryMb, DEFAULT_CEILINGS.maxMemoryMb),
      maxExecutionMs: Math.min(options.ceilings?.maxExecutionMs ?? DEFAULT_CEILINGS.maxExecutionMs, DEFAULT_CEILINGS.maxExecutionMs),
    };
  }

  /**
   * Loads every subdirectory of `dir` that holds a `module.toml`, in name order. A bad module
   * never stops the scan; a name already taken fails the later module.
   */
  async scanDirectory(dir: string): Promise<ScanReport> {
    const report: ScanReport = { loaded: [], remote: [], failed: [] };
    const root = resolve(dir);
    let names: string[];
    try {
      names = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    } catch (err) {
      report.failed.push({ dir: root, reason: `cannot read the modules directory: ${messageOf(err)}` });
      return report;
    }
    const local: { dir: string; parsed: ParsedManifest }[] = [];
    for (const name of names) {
      const moduleDir = join(root, name);
      let text: string | undefined;
      try {
        text = await readModuleManifest(moduleDir);
      } catch (err) {
        report.failed.push({ dir: moduleDir, reason: messageOf(err) });
        continue;
      }
      if (text === undefined) continue; // not a module directory
      try {
        const parsed = parseManifest(text, this.ceilings);
        this.claim(parsed.manifest.module.name, moduleDir);
        if (parsed.manifest.module.execution_mode !== 'local') {
          const remote = this.registerRemote(moduleDir, parsed.manifest);
          report.remote.push(remote);
        } else {
          local.push({ dir: moduleDir, parsed });
        }
      } catch (err) {
        report.failed.push({ dir: moduleDir, reason: messageOf(err) });
      }
    }
    const results = await mapLimited(local, LOAD_CONCURRENCY, async ({ dir: moduleDir, parsed }) => {
      try {
        return { ok: true as const, loaded: await this.loadClaimed(moduleDir, parsed) };
      } catch (err) {
        if (!(err instanceof PluginGrantError)) this.claimed.delete(parsed.manifest.module.name); // an ungranted module keeps its name
        return { ok: false as const, dir: moduleDir, reason: messageOf(err) };
      }
    });
    for (const r of results) {
      if (r.ok) report.loaded.push(r.loaded);
      else report.failed.push({ dir: r.dir, reason: r.reason });
    }
    for (const f of report.failed) this.logger.log('warn', `module not loaded: ${f.dir}: ${f.reason}`);
    return report;
  }

  /** Loads one module directory; throws `PluginLoadError` with the reason. Remote modules are registered, not loaded. */
  async loadModule(dir: string): Promise<LoadedModule | RemoteModule> {
    const moduleDir = resolve(dir);
    const text = await readModuleManifest(moduleDir);
    if (text === undefined) throw new PluginLoadError(`cannot read module.toml: ${join(moduleDir, 'module.toml')} does not exist`);
    const parsed = parseManifest(text, this.ceilings);
    this.claim(parsed.manifest.module.name, moduleDir);
    if (parsed.manifest.module.execution_mode !== 'local') return this.registerRemote(moduleDir, parsed.manifest);
    try {
      return await this.loadClaimed(moduleDir, parsed);
    } catch (err) {
      if (!(err instanceof PluginGrantError)) this.claimed.delete(parsed.manifest.module.name); // an ungranted module keeps its name
      throw err;
    }
  }

  /** Announces module `name` as being built: listed as building until `loadModule` serves it or `buildFailed` says why not. */
  building(name: string): void {
    this.setPending({ name, state: 'building' });
  }

  /** Module `name` will not be served: its build (or its load after the build) failed for `reason`. */
  buildFailed(name: string, reason: string): void {
    this.setPending({ name, state: 'failed', reason });
  }

  /**
   * Loads module `name`'s directory again into a new instance and swaps it in once it has loaded:
   * calls already given to the old instance finish there (then it closes), later calls go to the
   * new one. A reload that fails throws `PluginLoadError`, logs one line saying why, and leaves
   * the old instance serving. Reloads of one module run in turn.
   */
  reload(name: string): Promise<LoadedModule | RemoteModule> {
    const previous = this.reloads.get(name);
    const run = (previous ?? Promise.resolve()).catch(() => undefined).then(() => this.reloadNow(name));
    this.reloads.set(name, run);
    const forget = (): void => {
      if (this.reloads.get(name) === run) this.reloads.delete(name);
    };
    run.then(forget, forget);
    return run;
  }

  /**
   * Hears every change as it happens. Listeners run synchronously right after the change, so
   * `list()`, `get()` and `pending()` already show it; one that throws is logged and skipped.
   * Returns the unsubscribe function.
   */
  onChange(listener: ModuleChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Modules announced but not served, by name. */
  pending(): PendingModule[] {
    return [...this.pendingByName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A loaded local module. */
  get(name: string): ModuleHandle | undefined {
    return this.handles.get(name);
  }

  /** Every loaded local module, by name. */
  list(): ModuleHandle[] {
    return [...this.handles.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** A module to forward to the remote runner. */
  remote(name: string): RemoteModule | undefined {
    return this.remotes.get(name);
  }

  remoteModules(): RemoteModule[] {
    return [...this.remotes.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Unloads a module (local or remote): new calls find it gone at once. Its worker stops now and
   * its pending calls reject with `unloaded`, those of instances earlier reloads retired (still
   * finishing calls) included; with `finishCalls` the calls it was already given finish first (as
   * on a reload; `serve --watch` unloads a removed module so).
   */
  async unload(name: string, options: { finishCalls?: boolean } = {}): Promise<boolean> {
    const handle = this.handles.get(name);
    const remote = this.remotes.get(name);
    // Stopping now stops every instance of the name: those earlier reloads retired, still
    // finishing their calls, too (else a call given to one ran on for up to its whole limit).
    const retired = options.finishCalls ? [] : [...this.retiring.keys()].filter((h) => h.name === name);
    const closeRetired = Promise.all(retired.map((h) => h.close()));
    if (!handle && !remote) {
      const dropped = this.dropUngranted(name);
      await closeRetired;
      return dropped || retired.length > 0;
    }
    this.gate?.withdraw(name); // a reload of it waiting for a grant: its request goes with it
    // Calls it finishes keep its grants only while the grants file grants them (`retire`): a revoke ends them too.
    this.gate?.unserved(name);
    this.handles.delete(name);
    this.remotes.delete(name);
    this.claimed.delete(name);
    this.changed(name, 'unloaded');
    if (handle) await (options.finishCalls ? this.retire(handle) : handle.close());
    await closeRetired;
    return true;
  }

  /** Terminates every worker (and the transpiler). The registry is empty afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    this.gate?.close();
    this.grants.withdrawAll();
    const handles = [...this.handles.values()];
    this.handles.clear();
    this.remotes.clear();
    this.claimed.clear();
    this.pendingByName.clear();
    this.listeners.clear();
    // Instances a reload retired stop now too, their last calls rejected `unloaded`.
    await Promise.all([...handles, ...this.retiring.keys()].map((h) => h.close()));
    await Promise.all(this.retiring.values());
    await this.cache.close();
  }

  private claim(name: string, dir: string): void {
    if (this.closed) throw new PluginLoadError('the registry is closed');
    const other = this.claimed.get(name);
    // A module not served for want of a grant may be loaded again from its directory (granted since).
    if (other === dir && !this.handles.has(name) && this.pendingByName.get(name)?.state === 'ungranted') return;
    if (other !== undefined) throw new PluginLoadError(`duplicate module name '${name}' (already loaded from ${other})`);
    // `Echo` beside `echo` would be a second server taken for the first (an address, a grant prompt).
    const folded = nameSkeleton(name);
    for (const [taken, takenDir] of this.claimed) {
      if (nameSkeleton(taken) === folded) {
        throw new PluginLoadError(`module name '${name}' ${howAlike(taken, name).replace('differ ', 'differs ')} from '${taken}' (loaded from ${takenDir}); a client would take one for the other`);
      }
    }
    this.claimed.set(name, dir);
  }

  private async reloadNow(name: string): Promise<LoadedModule | RemoteModule> {
    const dir = this.claimed.get(name);
    if (dir === undefined || (!this.handles.has(name) && !this.remotes.has(name))) {
      throw new PluginLoadError(`cannot reload '${name}': no such module is loaded`);
    }
    try {
      const text = await readModuleManifest(dir);
      if (text === undefined) throw new PluginLoadError(`cannot read module.toml: ${join(dir, 'module.toml')} does not exist`);
      const parsed = parseManifest(text, this.ceilings);
      const now = parsed.manifest.module.name;
      if (now !== name) throw new PluginLoadError(`its module.toml now names '${now}': unload '${name}' and load the directory to rename it`);
      if (parsed.manifest.module.execution_mode !== 'local') return this.registerRemote(dir, parsed.manifest);
      return await this.loadClaimed(dir, parsed, true);
    } catch (err) {
      const reason = messageOf(err);
      // Unloaded (or closed) while it loaded: no previous instance serves on.
      const serving = !this.closed && (this.handles.has(name) || this.remotes.has(name));
      // A new component waiting for its grant has not failed: the caller (the watcher) says so, and the desk asks.
      if (!(serving && err instanceof PluginGrantError)) this.logger.log('warn', serving ? `reload failed, the previous instance keeps serving: ${reason}` : `reload abandoned: ${reason}`, { module: name });
      throw err instanceof PluginLoadError ? err : new PluginLoadError(reason);
    }
  }

  /**
   * Serves `handle` as module `name`: swapped in for the instance it replaces (retired: it
   * finishes its calls, then closes), its pending entry gone. Refused, and closed, if the module
   * was unloaded (or the registry closed) while it loaded.
   */
  private async install(name: string, dir: string, handle: RetiringHandle): Promise<void> {
    if (this.closed || this.claimed.get(name) !== dir) {
      await handle.close();
      throw new PluginLoadError(this.closed ? 'the registry was closed while the module loaded' : `module '${name}' was unloaded while it loaded`);
    }
    const old = this.handles.get(name);
    const wasRemote = this.remotes.delete(name);
    this.handles.set(name, handle);
    this.pendingByName.delete(name);
    if (old) void this.retire(old);
    this.changed(name, old || wasRemote ? 'reloaded' : 'served');
  }

  /**
   * An instance swapped out or unloaded with `finishCalls`: it closes once its calls have
   * finished, and until then the gate watches it against what its own load was granted on (not
   * what the name serves now): a grant taken back ends its calls, whatever retired it.
   */
  private retire(handle: ModuleHandle): Promise<void> {
    const entry = this.servedAs.get(handle);
    const unwatch = entry && this.gate ? this.gate.retiring(entry, () => void handle.close()) : undefined;
    const done = handle instanceof RetiringHandle ? handle.retire() : handle.close();
    this.retiring.set(handle, done);
    void done.then(() => {
      this.retiring.delete(handle);
      unwatch?.();
    });
    return done;
  }

  private setPending(entry: PendingModule): void {
    this.pendingByName.set(entry.name, entry);
    this.changed(entry.name, 'pending');
  }

  private changed(name: string, change: ModuleChange['change']): void {
    for (const listener of [...this.listeners]) {
      try {
        listener({ name, change });
      } catch (err) {
        this.logger.log('warn', `a module-change listener failed: ${messageOf(err)}`, { module: name });
      }
    }
  }

  private registerRemote(dir: string, manifest: Manifest): RemoteModule {
    const m = manifest.module;
    const remote: RemoteModule = Object.freeze({
      name: m.name,
      version: m.version,
      description: m.description,
      protocols: Object.freeze({ ...manifest.protocols }),
      executionMode: m.execution_mode,
      manifest,
      dir,
    });
    const old = this.handles.get(m.name);
    const had = old !== undefined || this.remotes.has(m.name);
    this.remotes.set(m.name, remote);
    // A remote module runs nothing here for a grant to be taken back from; the local instance it
    // replaces finishes its calls only while the grants file grants them.
    this.gate?.unserved(m.name);
    if (old) {
      this.handles.delete(m.name);
      void this.retire(old);
    }
    this.changed(m.name, had ? 'reloaded' : 'served');
    return remote;
  }

  /** `relistTools`: a reload, which lists the tools from the engine even if they are recorded. */
  private async loadClaimed(dir: string, parsed: ParsedManifest, relistTools = false): Promise<LoadedModule> {
    const { manifest, limits, warnings } = parsed;
    const name = manifest.module.name;
    for (const w of warnings) this.logger.log('warn', w, { module: name });
    const wasmPath = join(dir, manifest.module.wasm!);
    const bytes = await readComponent(dir, wasmPath);
    this.warnIfStale(name, dir, wasmPath);
    const prepared = await this.cache.prepare(bytes);
    checkWorld(prepared.world);
    if (!prepared.plugin) throw new PluginLoadError('the component could not be transpiled');
    if (this.gate && manifest.files) await resolveFilesRoot(dir, manifest.files.root); // a bad root is refused before anyone is asked
    const gateInput: GateInput = { name, version: manifest.module.version, dir, digest: componentDigest(bytes), manifest, imports: prepared.world.imports, providers: this.options.providers ?? {} };
    const loadAgain = () => this.loadClaimed(dir, parsed, relistTools);
    const granted = new Set<Capability>(this.gate ? this.gate.capabilities(gateInput, loadAgain) : this.grantsFor(name, manifest));
    const filesRoot = granted.has('file') && manifest.files ? await resolveFilesRoot(dir, manifest.files.root) : null;
    const providers = this.options.providers ?? {};
    const state = (cap: 'llm' | 'billing'): GrantState =>
      !granted.has(cap) ? 'not-granted' : providers[cap] ? 'granted' : 'not-configured';
    // Compiled (within the memory budget) when the engine starts: by `handle.start()` unless the tools were recorded.
    const compile = () => this.cache.compile(prepared, limits.maxMemoryMb);
    const handle = new RetiringHandle({
      manifest,
      limits,
      dir,
      compile,
      engineIdleMs: this.engineIdleMs,
      answerSpinMs: this.answerSpinMs,
      waitingBudget: this.waitingBudget,
      toolRecord: this.cache.toolRecord(prepared),
      relistTools,
      wasiImports: prepared.world.imports.map(unversioned).filter((i) => i.startsWith('wasi:')),
      config: granted.has('config') ? { ...manifest.config } : null,
      filesRoot,
      grants: { llm: state('llm'), billing: state('billing') },
      network: granted.has('network') && manifest.network ? { allow: [...manifest.network.allow] } : null,
      providers,
      meter: this.options.meter,
      logger: this.logger,
      guestLogger: this.guestLogger,
      workerHeapMb: this.options.workerHeapMb,
    });
    try {
      await handle.start();
    } catch (err) {
      await handle.close();
      throw err;
    }
    await this.install(name, dir, handle);
    const servedOn = this.gate?.served(gateInput, loadAgain); // a grant taken out of the grants file from now on unloads it
    if (servedOn) this.servedAs.set(handle, servedOn);
    return { name, dir, warnings, cached: prepared.cached };
  }

  /** A component older than its JavaScript serves the old code: said, with the command that rebuilds it. */
  private warnIfStale(name: string, dir: string, wasmPath: string): void {
    const newer = sourcesNewerThan(dir, wasmPath);
    if (newer.length === 0) return;
    const shown = newer.length > 3 ? `${newer.slice(0, 3).join(', ')} and ${newer.length - 3} more` : newer.join(', ');
    this.logger.log('warn', `${relative(dir, wasmPath)} is older than ${shown}: serving the build from before that change; rebuild it with \`${buildCommand(dir)}\``, { module: name });
  }

  /** What the grant gate may do to this registry: list a module as ungranted or failed, ask whether it is still wanted. */
  private gateHost(): GateHost {
    return {
      logger: this.logger,
      ungranted: (name, reason) => {
        if (!this.handles.has(name)) this.setPending({ name, state: 'ungranted', reason }); // a reload's older instance keeps serving
      },
      failed: (name, reason) => {
        if (this.handles.has(name)) {
          // A reload granted, then failing: as any failed reload, the previous instance keeps serving (and its name).
          this.logger.log('warn', `granted, but not loaded; the previous instance keeps serving: ${reason}`, { module: name });
          return;
        }
        this.claimed.delete(name);
        this.setPending({ name, state: 'failed', reason });
        this.logger.log('warn', `granted, but not loaded: ${reason}`, { module: name });
      },
      stillWanted: (name, dir) => !this.closed && this.claimed.get(name) === dir,
      revoked: async (name, reason) => {
        const handle = this.handles.get(name);
        if (!handle) return;
        // Not served from now on; the name stays claimed, listed as ungranted, until the file grants it again.
        this.handles.delete(name);
        this.changed(name, 'unloaded');
        this.setPending({ name, state: 'ungranted', reason });
        // Its calls in flight end now. Retired instances are the gate's to judge, each against what
        // its own load asked (`retire`): the same poll ends those whose grant was taken back.
        await handle.close();
      },
    };
  }

  /** Unloads a module listed as ungranted: its request is withdrawn, its name free again. */
  private dropUngranted(name: string): boolean {
    if (this.pendingByName.get(name)?.state !== 'ungranted') return false;
    this.gate?.withdraw(name);
    this.pendingByName.delete(name);
    this.claimed.delete(name);
    this.changed(name, 'unloaded');
    return true;
  }

  private grantsFor(name: string, manifest: Manifest): Iterable<Capability> {
    if (this.options.grant) return this.options.grant({ name, manifest });
    const caps: Capability[] = ['logging', 'llm', 'billing'];
    if (Object.keys(manifest.config).length > 0) caps.push('config');
    if (manifest.files) caps.push('file');
    if (manifest.network) caps.push('network');
    return caps;
  }
}

/**
 * The component's bytes (`readInsideModule`), at most `MAX_COMPONENT_BYTES`. A missing one of a
 * plugin written in JavaScript has not been built yet: the refusal says how.
 */
function readComponent(dir: string, path: string): Promise<Uint8Array> {
  const missing = !existsSync(path) && pluginSourceIn(dir) !== undefined;
  const hint = missing ? ` (build it: \`${buildCommand(dir)}\`)` : '';
  return readInsideModule(dir, path, MAX_COMPONENT_BYTES, (problem) => `the component ${path} ${problem}${hint}`);
}

/**
 * The `[files] root`, as a real path pinned at load. Its real path must be the module directory's
 * or lie below it: `data -> /` or `data -> ../../home` is refused, `data -> shared` (a sibling
 * inside the module) is fine.
 */
async function resolveFilesRoot(dir: string, root: string): Promise<string> {
  const path = join(dir, root);
  let real: string;
  try {
    real = await realpath(path);
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    throw new PluginLoadError(`[files] root ${JSON.stringify(root)} is not a directory (${messageOf(err)})`);
  }
  const realDir = await moduleRealPath(dir);
  if (!isWithin(real, realDir)) {
    throw new PluginLoadError(`[files] root ${JSON.stringify(root)} resolves to ${real}, outside the module directory ${realDir}; refused`);
  }
  return real;
}


async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(runners);
  return out;
}

import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { messageOf } from '../errors.js';
import type { Manifest } from '../manifest.js';
import type { PluginLogger, Providers } from '../providers.js';
import type { Capability } from '../worker/protocol.js';
import { capabilitiesOf, describeAsks, pluginAsks } from './asks.js';
import type { PluginGrants } from './desk.js';
import { shortDigest } from './digest.js';
import { MAX_OPEN_GRANT_ASKS, MAX_UNGRANTED_ASKS } from '../limits.js';
import { PluginGrantError, ungrantedReason, type UngrantedWhy } from './refusal.js';
import type { GrantStore, GrantsOptions, ModuleFiles } from './store.js';
import type { CapabilityAsk } from './types.js';

/** What the gate needs of its registry. */
export interface GateHost {
  readonly logger: PluginLogger;
  /** Lists module `name` as not served for `reason` (`'ungranted'`), unless an older instance still serves it. */
  ungranted(name: string, reason: string): void;
  /** Module `name` could not be loaded once granted: listed as failed. */
  failed(name: string, reason: string): void;
  /** Whether `dir` still holds module `name`'s claim (not unloaded, the registry not closed). */
  stillWanted(name: string, dir: string): boolean;
  /**
   * Module `name`'s grant was taken out of the grants file while it was served: it stops being
   * served now (its calls in flight end with its worker) and is listed as ungranted for `reason`.
   */
  revoked(name: string, reason: string): Promise<void>;
}

/** One module's load, as far as the gate is concerned. */
export interface GateInput {
  name: string;
  version: string;
  dir: string;
  /** `sha256:<hex>` of its component. */
  digest: string;
  manifest: Manifest;
  /** The component's world imports (`ns:pkg/iface@version`). */
  imports: readonly string[];
  providers: Providers;
}

/** A module served on grants the grants file may take back. */
export interface ServedModule {
  input: GateInput;
  asks: CapabilityAsk[];
  load: () => Promise<unknown>;
  /**
   * The digest of a newer build of it, granted since and loading: that grant replaced this one's
   * entry in the file (one entry per plugin), which is no revocation. This instance serves on,
   * as the previous instance of any reload does, while the file grants the newer build.
   */
  successor?: string;
}

/**
 * Between a module's component and its instance: what it asks for must be granted for this
 * digest (`GrantStore`) before it is served. What is not is refused (`mode: 'deny'`), granted for
 * this run (`'allow'`), or put to the desk (`'ask'`): the load throws `PluginGrantError` at once,
 * the module is listed as ungranted, and once a person grants it the grant is remembered and the
 * module loaded (`load` again). One request per module at a time: a newer load withdraws it.
 */
export class GrantGate {
  /** The requests at the desk, by module name, with the folder (`folderKey`) that asks. */
  private readonly asking = new Map<string, { open: AbortController; folder: string }>();
  /**
   * Modules refused `desk-full`, oldest first: each slot at the desk that frees (an answer, a
   * withdrawal) goes to the oldest of them still wanted and not asked enough, before any newer
   * load can take it, so co-tenants reloading cannot keep a plugin from the desk.
   */
  private readonly queued = new Map<string, { input: GateInput; missing: CapabilityAsk[]; load: () => Promise<unknown> }>();
  private closed = false;
  /** Modules not served for want of a grant, with what they miss: loaded once the grants file grants it. */
  private readonly waiting = new Map<string, { input: GateInput; missing: CapabilityAsk[]; load: () => Promise<unknown> }>();
  /**
   * Modules served with a grant the grants file may take back, with what they asked: checked
   * against the file at each change of it, and unloaded once it no longer grants it all.
   */
  private readonly serving = new Map<string, ServedModule>();
  /**
   * Every instance retired while it finishes the calls it was given (a reload's old instance, an
   * unload with `finishCalls`, a local module turned remote), each with what its own load asked
   * (`retiring`): checked at each change of the file as served modules are, and ended (`close`)
   * once it no longer grants that, so no call keeps what was taken back past the poll. The one
   * rule for retiring instances, whatever retired them and whatever the name serves now.
   */
  private readonly retiringCalls = new Set<{ entry: ServedModule; close: () => void }>();
  /**
   * How many times each module name, and each folder (`folderKey`), was put to the desk without
   * being granted since (`MAX_UNGRANTED_ASKS`): by folder too, or a folder renaming its module at
   * each change would be asked at every change.
   */
  private readonly asked = new Map<string, number>();
  private readonly askedFolders = new Map<string, number>();
  /** The grants file's poll: while a module waits for it (keeping the process alive) or is served on it (not). */
  private poll: NodeJS.Timeout | undefined;
  /** The file's stamp the poll last acted on (`undefined`: not looked at since the poll started). */
  private polledStamp: string | undefined;
  private readonly mode: NonNullable<GrantsOptions['mode']>;

  constructor(
    private readonly store: GrantStore,
    private readonly desk: PluginGrants,
    private readonly host: GateHost,
    mode: GrantsOptions['mode'],
  ) {
    this.mode = mode ?? 'ask';
  }

  /**
   * The capabilities module `input.name` gets, all it asks for being granted; otherwise throws
   * `PluginGrantError` saying which grant is missing and how to give it. `load` loads the module
   * again once a person has granted it.
   */
  capabilities(input: GateInput, load: () => Promise<unknown>): Capability[] {
    const { name, manifest, providers } = input;
    const asks = pluginAsks(input);
    this.withdraw(name); // a newer load of the module: its older request is moot
    // The same folder under another name (its module.toml renamed it): the old name's request is moot too.
    const folder = folderKey(input.dir);
    for (const [other, open] of [...this.asking]) if (other !== name && open.folder === folder) this.withdraw(other);
    const missing = this.store.missing(name, input.digest, moduleFiles(input), asks);
    if (missing.length > 0) {
      if (this.mode !== 'allow') this.refuse(input, missing, load);
      this.store.allowForNow(name, input.digest, missing);
      this.host.logger.log('info', `granted for this run (approvals: allow), not remembered: ${describeAsks(missing)} for component ${shortDigest(input.digest)}`, { module: name });
    }
    const caps: Capability[] = ['logging', ...capabilitiesOf(asks)];
    if (Object.keys(manifest.config).length > 0) caps.push('config');
    // Without a provider nothing is asked, and its calls answer "not configured" rather than "not granted".
    for (const cap of ['llm', 'billing'] as const) if (!providers[cap]) caps.push(cap);
    return caps;
  }

  /** Withdraws module `name`'s open request (unloaded, loaded again); whether there was one. */
  withdraw(name: string): boolean {
    this.stopWaiting(name);
    this.queued.delete(name);
    const open = this.asking.get(name);
    if (!open) return false;
    this.asking.delete(name);
    open.open.abort();
    this.handOver();
    return true;
  }

  close(): void {
    this.closed = true;
    for (const name of [...this.asking.keys(), ...this.waiting.keys(), ...this.queued.keys()]) this.withdraw(name);
    this.serving.clear();
    this.retiringCalls.clear();
    this.rewatch();
  }

  /**
   * Module `input.name` is served now, as `capabilities` granted it: from now on a change of the
   * grants file that takes back what it asks for unloads it (`GateHost.revoked`). Checked at once
   * too, for a grant taken back while it loaded. Only grants the file holds can be taken back: a
   * lock's entry or a grant for this run (`mode: 'allow'`) holds for the registry's life.
   * Returns what this instance was served on, for `retiring` when it is retired; `undefined` when
   * nothing it holds can be taken back.
   */
  served(input: GateInput, load: () => Promise<unknown>): ServedModule | undefined {
    this.asked.delete(input.name); // granted: a later change of it may be asked about again
    this.askedFolders.delete(folderKey(input.dir));
    const asks = pluginAsks(input);
    if (!this.store.file || asks.length === 0) {
      this.unserved(input.name);
      return undefined;
    }
    const entry: ServedModule = { input, asks, load };
    this.serving.set(input.name, entry);
    this.rewatch();
    this.checkServed(input.name);
    return entry;
  }

  /**
   * An instance served on `entry` is retired: it finishes the calls it was given (`close` ends
   * them now). Watched against what its own load asked until the returned function is called
   * (its calls finished): a grant taken back meanwhile ends them (`close`).
   */
  retiring(entry: ServedModule, close: () => void): () => void {
    const watched = { entry, close };
    this.retiringCalls.add(watched);
    this.rewatch();
    this.checkRetiring(watched);
    return () => {
      if (this.retiringCalls.delete(watched)) this.rewatch();
    };
  }

  /** Module `name` is served no more (unloaded, or its new instance asks for nothing the file grants). */
  unserved(name: string): void {
    if (this.serving.delete(name)) this.rewatch();
  }

  /**
   * Waits for the grants file to grant module `name` what it misses (`chatty-gateway plugin grant`
   * from another terminal): the file is polled once a second while any module waits, and a module
   * it now covers is loaded, its request at the desk withdrawn.
   */
  private await(input: GateInput, missing: CapabilityAsk[], load: () => Promise<unknown>): void {
    if (!this.store.file) return;
    this.waiting.set(input.name, { input, missing, load });
    this.rewatch();
  }

  /** Module `name` no longer waits for the grants file. */
  private stopWaiting(name: string): void {
    if (this.waiting.delete(name)) this.rewatch();
  }

  /**
   * Polls the grants file once a second while a module waits for it or is served on it. A waiting
   * module keeps the process alive (a registry with a module waiting is a registry still in use;
   * `close()` stops it); a served one alone does not. The poll acts on its first look whatever the
   * file is then, and on every change of its stamp after: a revoke written between a module being
   * served and that first look is not taken as the file's starting state (as `watchFile` took it).
   */
  private rewatch(): void {
    const path = this.store.file?.path;
    if (path === undefined) return;
    const wanted = this.waiting.size > 0 || this.serving.size > 0 || this.retiringCalls.size > 0;
    if (!wanted) {
      clearInterval(this.poll);
      this.poll = undefined;
      return;
    }
    if (!this.poll) {
      this.polledStamp = undefined;
      this.poll = setInterval(() => this.look(path), 1000);
    }
    if (this.waiting.size > 0) this.poll.ref();
    else this.poll.unref();
  }

  /** One poll: one stat; the file is read again (and acted on) only when it changed since the last look. */
  private look(path: string): void {
    const stamp = fileStamp(path);
    if (stamp === this.polledStamp) return;
    this.polledStamp = stamp;
    this.fileChanged();
  }

  /** Waiting modules first: one now granted may be the successor of one served (`ServedModule.successor`). */
  private readonly fileChanged = (): void => {
    this.loadNowGranted();
    for (const name of [...this.serving.keys()]) this.checkServed(name);
    for (const watched of [...this.retiringCalls]) this.checkRetiring(watched);
  };

  /**
   * What the grants file no longer grants of what `entry`'s load asked: judged at its successor's
   * digest once a newer build was granted (`ServedModule.successor`). The one judgement for served
   * and retiring instances alike. Throws as `GrantStore.missing` when the file cannot be read.
   */
  private ungranted(entry: ServedModule): CapabilityAsk[] {
    const { input, asks, successor } = entry;
    return this.store.missing(input.name, successor ?? input.digest, moduleFiles(input), asks);
  }

  /** A retired instance finishing its calls: ended once the file no longer grants what it asked (or cannot be read). */
  private checkRetiring(watched: { entry: ServedModule; close: () => void }): void {
    const { input, asks } = watched.entry;
    let missing: CapabilityAsk[];
    try {
      missing = this.ungranted(watched.entry);
    } catch {
      missing = asks;
    }
    if (missing.length === 0) return;
    this.host.logger.log('warn', `its calls still finishing after its unload or reload were ended: ${describeAsks(missing)} is no longer granted`, { module: input.name });
    this.retiringCalls.delete(watched);
    this.rewatch();
    watched.close();
  }

  private loadNowGranted(): void {
    for (const [name, { input, missing, load }] of [...this.waiting]) {
      let still: CapabilityAsk[];
      try {
        still = this.store.missing(name, input.digest, moduleFiles(input), missing);
      } catch (err) {
        this.host.logger.log('warn', messageOf(err), { module: name });
        return;
      }
      if (still.length > 0) continue;
      this.withdraw(name);
      if (!this.host.stillWanted(name, input.dir)) continue;
      this.host.logger.log('info', `granted in the grants file: ${describeAsks(missing)} for component ${shortDigest(input.digest)}`, { module: name });
      this.load(input, load);
    }
  }

  /**
   * Whether the grants file still grants served module `name` what it asks for; if not, it is
   * unloaded and waits, as a module refused with `mode: 'deny'`, for the file to grant it again
   * (nobody is asked: taking a grant out is a person's answer already). A file that can no longer
   * be read (malformed, or refused as not owner-only) grants nothing: the module is unloaded the
   * same way (fail closed: a person who rewrote the file to revoke sees the grant gone, so the
   * module must not keep it), and served again once the file reads and grants it.
   */
  private checkServed(name: string): void {
    const entry = this.serving.get(name);
    if (!entry) return;
    const { input, asks, load } = entry;
    let missing: CapabilityAsk[];
    let why: UngrantedWhy = 'withdrawn';
    try {
      missing = this.ungranted(entry);
    } catch (err) {
      this.host.logger.log('warn', `${messageOf(err)}; the modules served on its grants are unloaded until it reads again`, { module: name });
      missing = asks;
      why = 'unreadable';
    }
    if (missing.length === 0) return;
    const reason = ungrantedReason(name, input.digest, missing, why, this.store.grantCommand(name));
    this.host.logger.log('warn', `unloaded: ${reason}`, { module: name });
    // Not served from here on (the host drops it before it returns); waiting from the same moment, so the watch never lapses.
    void this.host.revoked(name, reason);
    this.serving.delete(name);
    this.await(input, missing, load);
  }

  /**
   * Why module `name` is not put to the desk, if it is not: nobody is asked (`mode: 'deny'`), it
   * was put there `MAX_UNGRANTED_ASKS` times without a grant, or `MAX_OPEN_GRANT_ASKS` other
   * requests wait already. A person is asked about a plugin a few times, not at its every change.
   */
  private notAsked(name: string, folder: string): { why: UngrantedWhy; count?: number } | undefined {
    if (this.mode === 'deny') return { why: 'not-asked' };
    const asked = Math.max(this.asked.get(name) ?? 0, this.askedFolders.get(folder) ?? 0);
    if (asked >= MAX_UNGRANTED_ASKS) return { why: 'asked-enough', count: asked };
    if (this.asking.size >= MAX_OPEN_GRANT_ASKS) return { why: 'desk-full', count: this.asking.size };
    return undefined;
  }

  private refuse(input: GateInput, missing: CapabilityAsk[], load: () => Promise<unknown>): never {
    const { name, digest } = input;
    this.await(input, missing, load);
    const notAsked = this.notAsked(name, folderKey(input.dir));
    if (notAsked !== undefined) {
      if (notAsked.why === 'desk-full') this.queued.set(name, { input, missing, load });
      const reason = ungrantedReason(name, digest, missing, notAsked.why, this.store.grantCommand(name), notAsked.count);
      this.host.ungranted(name, reason);
      throw new PluginGrantError(reason, missing);
    }
    throw new PluginGrantError(this.putToDesk(input, missing, load), missing);
  }

  /** Puts module `input.name`'s request to the desk; the reason it is listed ungranted meanwhile. */
  private putToDesk(input: GateInput, missing: CapabilityAsk[], load: () => Promise<unknown>): string {
    const { name, digest } = input;
    const folder = folderKey(input.dir);
    this.asked.set(name, (this.asked.get(name) ?? 0) + 1);
    this.askedFolders.set(folder, (this.askedFolders.get(folder) ?? 0) + 1);
    const reason = ungrantedReason(name, digest, missing, 'asking', this.store.grantCommand(name));
    const open = new AbortController();
    const entry = { open, folder };
    this.asking.set(name, entry);
    this.host.ungranted(name, reason);
    void this.desk
      .ask({ plugin: name, version: input.manifest.module.version, digest, asks: missing, dir: input.dir }, open.signal)
      .then((outcome) => {
        if (this.asking.get(name) !== entry) return; // withdrawn, or a newer load asks now
        this.asking.delete(name);
        this.handOver();
        if (outcome === 'withdrawn' || !this.host.stillWanted(name, input.dir)) return;
        if (outcome === 'denied') {
          const denied = ungrantedReason(name, digest, missing, 'denied', this.store.grantCommand(name));
          this.host.ungranted(name, denied);
          this.host.logger.log('warn', `not served: ${denied}`, { module: name });
          return;
        }
        this.granted(input, missing, load);
      });
    return reason;
  }

  /** Slots freed at the desk go to the modules refused `desk-full`, oldest first. */
  private handOver(): void {
    for (const [name, { input, missing, load }] of [...this.queued]) {
      if (this.closed || this.asking.size >= MAX_OPEN_GRANT_ASKS) return;
      this.queued.delete(name);
      if (!this.host.stillWanted(name, input.dir) || this.notAsked(name, folderKey(input.dir)) !== undefined) continue;
      this.host.logger.log('info', 'put to the desk, now that a request there was answered or withdrawn', { module: name });
      this.putToDesk(input, missing, load);
    }
  }

  /** A person granted `missing`: remembered (or, when the grants file refuses it, granted for this run and said), then the module loads. */
  private granted(input: GateInput, missing: CapabilityAsk[], load: () => Promise<unknown>): void {
    const { name, digest } = input;
    this.stopWaiting(name);
    try {
      this.store.remember(name, digest, missing);
    } catch (err) {
      this.store.allowForNow(name, digest, missing);
      this.host.logger.log('warn', `granted for this run only, not remembered: ${messageOf(err)}`, { module: name });
    }
    this.host.logger.log('info', `granted ${describeAsks(missing)} for component ${shortDigest(digest)}`, { module: name });
    this.load(input, load);
  }

  /** Loads a module now granted; a failure lists it as failed. */
  private load(input: GateInput, load: () => Promise<unknown>): void {
    const { name } = input;
    const served = this.serving.get(name);
    if (served && served.input.digest !== input.digest) served.successor = input.digest;
    load().then(() => this.host.logger.log('info', 'served, now that it is granted', { module: name }), (err: unknown) => {
      if (err instanceof PluginGrantError) return; // it changed meanwhile and asks again: listed already
      if (this.host.stillWanted(name, input.dir)) this.host.failed(name, messageOf(err));
    });
  }
}

/** What identifies one version of the grants file (`'absent'`, or why it cannot be looked at). */
function fileStamp(path: string): string {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}:${s.uid}`;
  } catch (err) {
    return `unstatable:${(err as NodeJS.ErrnoException).code ?? messageOf(err)}`;
  }
}

/** The module's folder and component file, as the store judges a lock entry pinned to sources. */
function moduleFiles(input: GateInput): ModuleFiles {
  return { dir: input.dir, component: join(input.dir, input.manifest.module.wasm ?? '') };
}

/** A plugin folder as the desk's bounds count it: its inode (a rename of the folder keeps it), else its path. */
function folderKey(dir: string): string {
  try {
    const s = statSync(dir, { bigint: true });
    return `${s.dev}:${s.ino}`;
  } catch {
    return resolve(dir);
  }
}

import { lstatSync, realpathSync } from 'node:fs';
import { dirname, join, relative, isAbsolute, sep } from 'node:path';
import { currentUid, readRegularFileSync, whyFolderChainOpen } from '../../owner-only/index.js';
import { ownFile } from '../own-files.js';
import { BUILD_STAMP, sourcesDigest } from '../build/source-digest.js';
import { sameAsk } from './asks.js';
import { plainGrantCommand } from './refusal.js';
import { GrantsFile } from './grants-file.js';
import { readPluginsLock } from './lock-file.js';
import type { LockedGrant } from './record.js';
import type { CapabilityAsk } from './types.js';

/** How a registry gives `file`, `llm`, `billing` and `network` (`ModuleRegistryOptions.grants`). */
export interface GrantsOptions {
  /**
   * The grants file (an owner-only JSON file, e.g. `grantsFileBeside(approvalsFile)`): grants are
   * remembered there across restarts. Without it a grant lasts as long as the registry.
   */
  file?: string | undefined;
  /** `plugins.lock` files the embedder ships: their entries pre-grant (read once, never written). */
  locks?: readonly string[] | undefined;
  /**
   * Folders only your own build writes (`openModules` names the bundled examples' build cache): a
   * lock entry pinned to `sources` holds only for a module directory inside one. Anywhere else a
   * `.build-stamp` is a file whoever ships the folder wrote, beside whatever component they chose.
   */
  trustedBuilds?: readonly string[] | undefined;
  /**
   * What happens to an ask not granted yet: `'ask'` (default) puts it to `registry.grants` and the
   * module waits, not served; `'allow'` grants it for this registry only (never remembered);
   * `'deny'` refuses it: the module is not served, and the reason says how to grant it.
   */
  mode?: 'ask' | 'allow' | 'deny' | undefined;
  /**
   * The command a refusal tells a person to type to grant module `name` (default:
   * `chatty-gateway plugin grant NAME`): `serve` names its `--modules-dir` and `--approvals-file`
   * in it, so the command finds the module and writes the grants file this registry reads.
   */
  grantCommand?: ((name: string) => string) | undefined;
}

/**
 * Where a registry's grants come from: the embedder's `plugins.lock` entries, the grants file, and
 * what was granted while it runs. Each is pinned to a plugin's name and its component's digest (a
 * lock entry may pin the sources instead), and grants asks, not bare capabilities: a grant of
 * `network: api.github.com:443` does not cover `network: evil.example` added to the manifest later.
 */
export class GrantStore {
  readonly file: GrantsFile | undefined;
  private readonly locked: readonly LockedGrant[];
  private readonly trustedBuilds: readonly string[];
  /** Granted while this registry runs, by plugin name (the file's entry when there is a file). */
  private readonly memory = new Map<string, { digest: string; granted: CapabilityAsk[] }>();

  /** How a refusal says to grant module `name` (`GrantsOptions.grantCommand`). */
  readonly grantCommand: (name: string) => string;

  /** Reads the locks and the grants file at once: a malformed one throws, naming it, before anything loads. */
  constructor(options: GrantsOptions) {
    this.grantCommand = options.grantCommand ?? plainGrantCommand;
    this.locked = (options.locks ?? []).flatMap((path) => readPluginsLock(path));
    this.trustedBuilds = options.trustedBuilds ?? [];
    this.file = options.file !== undefined ? new GrantsFile(options.file) : undefined;
    this.file?.read();
  }

  /** The asks among `asks` not granted to plugin `name` (`module`: its folder and component file) at component `digest`. Throws `GrantsFileError` when the file has become malformed. */
  missing(name: string, digest: string, module: ModuleFiles, asks: readonly CapabilityAsk[]): CapabilityAsk[] {
    const granted = [...this.lockedFor(name, digest, module), ...this.rememberedFor(name, digest)];
    const missing = asks.filter((ask) => !granted.some((had) => sameAsk(had, ask)));
    // The file only when the rest does not cover it: a grant given for this run holds even if the file has become unreadable.
    if (missing.length === 0 || !this.file) return missing;
    const remembered = this.file.grantedTo(name, digest);
    return missing.filter((ask) => !remembered.some((had) => sameAsk(had, ask)));
  }

  /** Remembers a grant: in the file when there is one (throws `GrantsFileError`, the file untouched, when it is malformed), else for this registry. */
  remember(name: string, digest: string, asks: readonly CapabilityAsk[]): void {
    if (this.file) this.file.remember(name, digest, asks);
    else this.allowForNow(name, digest, asks);
  }

  /** Granted for this run only (`mode: 'allow'`): never written. */
  allowForNow(name: string, digest: string, asks: readonly CapabilityAsk[]): void {
    this.memory.set(name, { digest, granted: [...this.rememberedFor(name, digest), ...asks] });
  }

  private rememberedFor(name: string, digest: string): CapabilityAsk[] {
    const entry = this.memory.get(name);
    return entry && entry.digest === digest ? entry.granted : [];
  }

  /**
   * What the locks grant `name`: entries pinned to this digest, and entries pinned to sources when
   * the module directory lies in a trusted build folder, holds those very sources and was built
   * from them (its build stamp ends with their digest, as `ensureExamplesBuilt` writes it). The
   * stamp proves nothing by itself (anyone can write one beside any component): the folder does,
   * and only when nobody else could have written the component (`builtByUs`).
   */
  private lockedFor(name: string, digest: string, { dir, component }: ModuleFiles): CapabilityAsk[] {
    const entries = this.locked.filter((entry) => entry.name === name);
    if (entries.length === 0) return [];
    let sources: string | undefined;
    const granted: CapabilityAsk[] = [];
    for (const entry of entries) {
      if (entry.digest === digest) granted.push(...entry.granted);
      else if (entry.sources !== undefined) {
        sources ??= builtByUs(this.trustedBuildOf(dir), component) ? builtFromSources(dir) : '';
        if (sources === entry.sources) granted.push(...entry.granted);
      }
    }
    return granted;
  }

  /** The trusted build folder (its real path) module directory `dir` (its real path) lies in, if any. */
  private trustedBuildOf(dir: string): string | undefined {
    const real = realPathOrNothing(dir)[0];
    if (real === undefined) return undefined;
    return this.trustedBuilds.flatMap(realPathOrNothing).find((folder) => {
      const rel = relative(folder, real);
      return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
    });
  }
}

/** A module as the grants judge it: its folder and its component file (`[module] wasm`). */
export interface ModuleFiles {
  dir: string;
  component: string;
}

/**
 * Whether only this user could have put `component` where it is, inside trusted build folder
 * `folder`: the file (its real path) and every folder from it up to `folder` are this user's own,
 * and none of them is writable by anyone else. A build folder under umask 002 is group-writable,
 * and a component a group member put there would otherwise be granted what the lock grants the
 * sources beside it (the sources are digested; the component is not).
 */
function builtByUs(folder: string | undefined, component: string): boolean {
  if (folder === undefined) return false;
  const real = realPathOrNothing(component)[0];
  if (real === undefined) return false;
  const rel = relative(folder, real);
  if (rel === '' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return false; // not inside the folder after all
  let st;
  try {
    st = lstatSync(real);
  } catch {
    return false;
  }
  // The file, then owner-only's one rule for a trusted folder: its folder and every folder above.
  return ownFile(st) && (process.platform === 'win32' || whyFolderChainOpen(dirname(real), currentUid()) === undefined);
}

/** `[real path]`, or `[]` for a folder that does not exist (yet): nothing is in it. */
function realPathOrNothing(path: string): string[] {
  try {
    return [realpathSync(path)];
  } catch {
    return [];
  }
}

/** The sources digest of `dir` if its component was built from them (build stamp), else `''`. */
function builtFromSources(dir: string): string {
  // Read as ensureExamplesBuilt reads it: a small regular file, never a link, never waited on.
  const read = readRegularFileSync(join(dir, BUILD_STAMP), { maxBytes: 4096 });
  if (!read.ok) return '';
  const stamp = read.bytes.toString('utf8');
  const digest = sourcesDigest(dir);
  return stamp.endsWith(`:${digest.slice('sha256:'.length, 'sha256:'.length + 32)}`) ? digest : '';
}

/**
 * Building plugins written in JavaScript into `chatty:plugin@0.3.0` components with
 * componentize-js, creating new ones from the template, and building the bundled examples once
 * for `serve`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, mkdtemp, open, readFile, readdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { currentUid, readRegularFileSync, userCacheDir, whyFolderChainOpen, whyOpenToOthers } from '../../owner-only/index.js';
import { PluginLoadError } from '../errors.js';
import { isWithin, moduleRealPath, openedRealPath, readModuleManifest } from '../inside-module.js';
import { parseManifest } from '../manifest.js';
import { PLUGIN_WORLD, packageRoot, pluginWitPath } from '../world.js';
import { importComponentize } from './componentize-import.js';
import { ENTRY_PREFIX, entrySource } from './entry.js';
import { findPluginSource } from './plugin-source.js';
import { checkPluginSource, type CheckedFile } from './source-check.js';
import { BUILD_STAMP, MAX_COPY_DIGEST_BYTES, builtCopyDigest, sourcesDigest } from './source-digest.js';
import { buildInChildProcess } from './build-process.js';
import { buildingElsewhere, identityOf, moveAsideJudged, publishBuild } from './examples-publish.js';

export { SOURCE_CANDIDATES, findPluginSource, pluginSourceIn } from './plugin-source.js';
export { buildCommand, sourcesNewerThan } from './build-hints.js';
export { sourcesDigest, BUILD_STAMP } from './source-digest.js';
export { buildInChildProcess, BUILD_TIMEOUT_MS, type BuildProcessOptions } from './build-process.js';


/**
 * componentize-js features the JS engine is built without. 'stdio' would import
 * `wasi:filesystem` as well as stdout/stderr, so `console` is routed to `chatty:plugin/logging` by
 * the build's wrapper instead (`entry.ts`); 'fetch-event' would export an HTTP server. 'http'
 * stays on: it is the guest's `fetch` (imports `wasi:http/outgoing-handler`), which the host
 * serves only as far as a granted `[network]` allow-list reaches (plugins/network/). 'clocks'
 * and 'random' stay on: without them `Date.now()` is frozen at build time and `Math.random()`
 * repeats the same sequence in every instance.
 */
export const DISABLED_FEATURES = ['stdio', 'fetch-event'] as const;

export interface BuildResult {
  /** The component written (the manifest's `wasm`). */
  wasmPath: string;
  bytes: number;
  ms: number;
}

export interface BuildOptions {
  /** Called once the plugin directory and its manifest have passed their checks and its source is found: the build starts (its JavaScript is checked first). */
  onBuilding?: () => void;
}

/**
 * Builds `<dir>`'s JavaScript into the component its `module.toml` names (`[module] wasm`). A
 * directory that is no plugin (missing, a file, no or a bad `module.toml`, no source) is refused
 * before the build starts, with a `PluginLoadError` of one line; the source's own problems are
 * found next, before componentize-js (a syntax error adds the line with a caret).
 */
export async function buildPlugin(dir: string, options: BuildOptions = {}): Promise<BuildResult> {
  const root = resolve(dir);
  const { manifest } = parseManifest(await readPluginManifest(root));
  if (!manifest.module.wasm) throw new PluginLoadError('module.toml has no [module] wasm: a remote module is not built here');
  const wasmPath = join(root, manifest.module.wasm);
  const realRoot = await moduleRealPath(root);
  await folderInside(dirname(wasmPath), root, realRoot); // said before a build of 20 s, and checked again as it is written
  const source = findPluginSource(root);
  options.onBuilding?.();
  const files = checkPluginSource(source, root);
  const started = performance.now();
  if (!isMainThread) {
    // A worker thread cannot move the working directory, which the build must (componentizePlugin):
    // from `/` componentize-js would show its engine the whole disk. A child process's main thread can.
    await buildInChildProcess(root);
    return { wasmPath, bytes: statSync(wasmPath).size, ms: performance.now() - started };
  }
  const component = await componentizePlugin(files, relative(root, source).split(sep).join('/'));
  await writeComponentInside(wasmPath, component, root, realRoot);
  return { wasmPath, bytes: component.length, ms: performance.now() - started };
}

/**
 * Writes the component at `wasmPath`, never through a link out of the plugin folder: `serve
 * --watch` builds a folder someone planted before anyone is asked anything, so a `wasm =
 * "out/plugin.wasm"` with `out -> ~/elsewhere`, or a link planted at the name written aside, would
 * otherwise write (and clobber) files anywhere this user can. The folder is checked before it is
 * made and after; the file aside is a new one (random name, `O_EXCL`, `O_NOFOLLOW`) whose opened
 * descriptor must lie inside the folder (`openedRealPath`), then it is renamed into place.
 */
async function writeComponentInside(wasmPath: string, component: Uint8Array, root: string, realRoot: string): Promise<void> {
  const folder = dirname(wasmPath);
  await folderInside(folder, root, realRoot);
  await mkdir(folder, { recursive: true, mode: 0o755 });
  await folderInside(folder, root, realRoot);
  // Written aside, then renamed: a build stopped mid-write (serve --watch stops one) never leaves half a component.
  // Writable by its owner alone, whatever the umask: a lock entry pinned to sources trusts no component others could write (grants/store.ts).
  const aside = `${wasmPath}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const file = await open(aside, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    const opened = await openedRealPath(file.fd, aside, await file.stat());
    if (opened === undefined || !isWithin(opened, realRoot)) throw new PluginLoadError(`${relative(root, folder) || '.'} moved out of the plugin folder ${realRoot} while the component was written: not written there`);
    await file.writeFile(component);
  } catch (err) {
    await file.close();
    await rm(aside, { force: true });
    throw err;
  }
  await file.close();
  await rename(aside, wasmPath);
}

/** `folder` (to be made, maybe) lies inside the plugin folder: the nearest part of it that exists has its real path there. */
async function folderInside(folder: string, root: string, realRoot: string): Promise<void> {
  let existing = folder;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = await realpath(existing).catch(() => undefined);
  if (real !== undefined && isWithin(real, realRoot)) return;
  throw new PluginLoadError(`the component's folder ${relative(root, folder) || '.'} leads outside the plugin folder ${realRoot} (to ${real ?? 'nowhere'}): refused, nothing is written there`);
}

/**
 * `<root>/module.toml`, or why there is none to build from: one line each. Read as serve reads it
 * (`readModuleManifest`: a regular file inside the folder, at most 1 MiB, opened without
 * blocking): a committed `module.toml -> /dev/zero` was read to Node's 2 GiB limit, a FIFO waited
 * on forever, and a link to a file of the user's parsed (TOML's errors quote its lines).
 */
async function readPluginManifest(root: string): Promise<string> {
  const st = statSync(root, { throwIfNoEntry: false });
  if (st === undefined) throw new PluginLoadError(`${root} does not exist (a plugin directory holds module.toml; start one with \`npx chatty-gateway plugin new <name>\`)`);
  if (!st.isDirectory()) throw new PluginLoadError(`${root} is not a directory (give the plugin directory, the one with module.toml)`);
  const text = await readModuleManifest(root);
  if (text === undefined) throw new PluginLoadError(`${root} has no module.toml: it is not a plugin directory (start one with \`npx chatty-gateway plugin new <name>\`)`);
  return text;
}

/** Builds run one at a time: each is CPU-heavy, and each moves the working directory (below). */
let buildChain: Promise<unknown> = Promise.resolve();

function oneAtATime<T>(run: () => Promise<T>): Promise<T> {
  const next = buildChain.then(run, run);
  buildChain = next.catch(() => undefined);
  return next;
}

/**
 * Runs componentize-js on the wrapper (`entry.ts`) in a private copy (a fresh 0700 folder) of
 * exactly the files the source check read, as it read them, with the working directory there for
 * the build's length. componentize-js shows the engine the working directory as `/` whenever it
 * holds the entry, and the engine reads whatever the modules import: built in the plugin folder
 * from a folder above it (`plugin build plugins/x`, `serve --watch` started from home), `/` was
 * that folder and a `lib.txt` importing `../../secret.js` took a file of the user's into the
 * component. In the copy the engine can reach nothing the check did not read: not a file swapped
 * in after the check, nor a hard link, nor an import the check could not see (a computed
 * `import()`).
 */
function componentizePlugin(files: readonly CheckedFile[], sourcePath: string): Promise<Uint8Array> {
  return oneAtATime(async () => {
    const { componentize } = await importComponentize();
    const copy = await mkdtemp(join(tmpdir(), 'chatty-build-'));
    const cwd = process.cwd();
    try {
      for (const file of files) {
        const to = join(copy, ...file.path.split('/'));
        await mkdir(dirname(to), { recursive: true, mode: 0o700 });
        await writeFile(to, file.bytes, { mode: 0o600, flag: 'wx' });
      }
      const entry = join(copy, `${ENTRY_PREFIX}${randomBytes(6).toString('hex')}.js`);
      await writeFile(entry, entrySource(`./${sourcePath}`), { mode: 0o600, flag: 'wx' });
      process.chdir(copy); // the main thread's: buildPlugin sends a worker thread's build to a child process
      // The WIT goes in as text: componentize-js reads `witPath` through preview2-shim, which
      // starts with no preopens.
      const { component } = await componentize({
        sourcePath: entry,
        witWorld: readFileSync(pluginWitPath(), 'utf8'),
        worldName: PLUGIN_WORLD,
        disableFeatures: [...DISABLED_FEATURES],
      } as unknown as { sourcePath: string }).catch((err: unknown) => {
        throw new PluginLoadError(engineFailure(err));
      });
      return component;
    } finally {
      if (process.cwd() === copy) process.chdir(cwd);
      await rm(copy, { recursive: true, force: true });
    }
  });
}

/** How much of componentize-js's own failure is kept (wizer's output quotes the files it read). */
const MAX_ENGINE_FAILURE_CHARS = 4_000;

/** componentize-js's failure, cut to its end (where wizer says why): its text is escaped where it is shown (the CLI, serve's lines). */
function engineFailure(err: unknown): string {
  const message = (err instanceof Error ? err.message : String(err)).trim();
  return message.length <= MAX_ENGINE_FAILURE_CHARS ? message : `… ${message.slice(-MAX_ENGINE_FAILURE_CHARS)}`;
}

/**
 * componentize-js's version, from its package.json (what its own `version` export reads), found
 * without importing it: the process that only checks whether the examples need building (an
 * Electron main process) loads no compiler and registers no resolve hooks (`componentize-import.ts`).
 */
async function componentizeVersion(): Promise<string> {
  const manifest = new URL('../package.json', import.meta.resolve('@bytecodealliance/componentize-js'));
  const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version?: unknown };
  return typeof version === 'string' ? version : 'unknown';
}

/** The bundled examples (`examples/plugins/` in the package). */
export function examplesDir(): string {
  return join(packageRoot(), 'examples', 'plugins');
}

export function templateDir(): string {
  return join(examplesDir(), 'template');
}

/** Template files stored without their dot: npm and electron-builder leave `.gitignore` out of a package. */
const TEMPLATE_DOTFILES: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/**
 * `chatty-gateway plugin new <name>`: copies the template to `<parent>/<name>`, names it, and puts
 * the WIT beside it for reference. A name with a path separator (`./plugins/hello`) is a path
 * relative to `parent` whose last component is the module name. Refuses an existing directory.
 * Returns the new directory's absolute path.
 */
export async function newPlugin(name: string, parent: string): Promise<string> {
  const target = resolve(parent, name);
  // The path's own last component ("plugins/.." names no module, even though it resolves to one).
  const moduleName = name.split(sep === '\\' ? /[\\/]/ : '/').filter((part) => part !== '').at(-1) ?? '';
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(moduleName)) {
    throw new PluginLoadError(
      `plugin name ${JSON.stringify(moduleName)}: use letters, digits, ".", "_" or "-", starting with a letter or digit (it is part of the URL /mcp/<name>)`,
    );
  }
  if (existsSync(target)) throw new PluginLoadError(`${target} already exists`);
  await mkdir(dirname(target), { recursive: true });
  await cp(templateDir(), target, { recursive: true, filter: (src) => !src.endsWith('.wasm') && !basename(src).startsWith(ENTRY_PREFIX) });
  for (const [stored, real] of Object.entries(TEMPLATE_DOTFILES)) {
    if (existsSync(join(target, stored))) await rename(join(target, stored), join(target, real));
  }
  const named = (text: string): string => text.replaceAll('"template"', JSON.stringify(moduleName)).replaceAll("'template'", `'${moduleName}'`);
  for (const file of ['module.toml', 'src/plugin.js']) {
    const path = join(target, file);
    await writeFile(path, named(await readFile(path, 'utf8')));
  }
  await mkdir(join(target, 'wit'), { recursive: true });
  await cp(pluginWitPath(), join(target, 'wit', 'plugin.wit'));
  return target;
}

export interface EnsureExamplesOptions {
  /** Where built examples live (default `<user cache dir>/chatty-gateway/examples`). */
  cacheDir?: string;
  /** Progress lines ("building text-tools…"). */
  onProgress?: (line: string) => void;
  /** Example directories to leave out (default: the template). */
  exclude?: readonly string[];
  /**
   * Build in the background: an example that needs building is not built here; its stale build
   * is removed (so a scan of the returned directory does not serve it) and `defer` is handed a
   * function that builds it and resolves to its directory. `serve` uses it to be ready at once.
   * A current copy another gateway put in place meanwhile is kept: found as the stale one is
   * removed, the example is not deferred; found as the deferred build starts, nothing is built.
   */
  defer?: (name: string, build: () => Promise<string>) => void;
  /** What builds one copied example directory (default `buildPlugin`). */
  build?: (dir: string) => Promise<unknown>;
}

/**
 * Builds the bundled examples once and returns a modules directory to scan. Each example is
 * copied to `<cacheDir>/modules/<name>/` with its component built there; a stamp of its sources,
 * the WIT, the build's wrapper and features, and componentize-js's version decides whether it is
 * rebuilt. Built components never go in the source tree.
 */
export async function ensureExamplesBuilt(source = examplesDir(), options: EnsureExamplesOptions = {}): Promise<string> {
  const cacheDir = options.cacheDir ?? join(userCacheDir(), 'chatty-gateway', 'examples');
  const modulesDir = join(cacheDir, 'modules');
  await mkdir(modulesDir, { recursive: true, mode: 0o755 });
  // The trusted build folder (a lock entry pinned to sources vouches for what is built in it):
  // this user's, not a link, writable by nobody else, and so is every folder above it. Refused,
  // not closed in place: whoever could write there may already have put their own code in it.
  // Builds in progress and copies being removed: beside modules/ (one filesystem, so a rename puts a build in place), never in the folder scanned.
  const buildingDir = join(cacheDir, 'building');
  await mkdir(buildingDir, { recursive: true, mode: 0o700 });
  for (const folder of [modulesDir, buildingDir]) {
    const why = process.platform === 'win32' ? undefined : whyFolderChainOpen(folder, currentUid());
    if (why) throw new PluginLoadError(`${why}: the examples are not built into ${folder} (remove it, or chmod go-w the folder named, and start again)`);
  }
  const exclude = new Set(options.exclude ?? ['template']);
  const names = readdirSync(source, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !exclude.has(e.name) && existsSync(join(source, e.name, 'module.toml')))
    .map((e) => e.name)
    .sort();
  // The wrapper and the engine's features are part of the recipe: a change to either rebuilds.
  const recipe = createHash('sha256').update(readFileSync(pluginWitPath())).update(entrySource('')).update(DISABLED_FEATURES.join(',')).digest('hex');
  const toolVersion = `${await componentizeVersion()}:${recipe}`;
  const build = options.build ?? ((dir: string) => buildPlugin(dir));
  for (const name of names) {
    const from = join(source, name);
    const sources = hashTree(from);
    const to = join(modulesDir, name);
    // Built already, and nobody else could have written in it since: used as it is. A copy found
    // open to others (an older gateway's, under umask 002) is built anew, not closed in place: a
    // group member may have rewritten its component meanwhile, and the lock would vouch for it.
    // Judged before its stamp is read, and the stamp read never waiting: in an open copy a FIFO may be there.
    const isCurrentAt = async (dir: string): Promise<boolean> => (await isOwnOnly(dir)) && isAsBuilt(dir, toolVersion, sources);
    const judged = await identityOf(to); // what is judged, so that only it is moved aside (moveAsideJudged)
    if (await isCurrentAt(to)) continue;
    const buildOne = async (): Promise<string> => {
      // Decided again as it starts: another gateway may have put this very build in place since (a deferred build runs minutes later).
      if (await isCurrentAt(to)) return to;
      options.onProgress?.(`building example plugin ${name} (componentize-js, about 20 s)…`);
      const tmp = join(buildingDir, `${name}.tmp-${process.pid}`);
      await rm(tmp, { recursive: true, force: true });
      // Made 0700 before anything goes in (cp into a folder that exists keeps its mode): nobody
      // else reaches the files while componentize-js runs, whatever modes the checkout gave them.
      await mkdir(tmp, { mode: 0o700 });
      await cp(from, tmp, { recursive: true, filter: (src) => !src.endsWith('.wasm') && !basename(src).startsWith(ENTRY_PREFIX) });
      await build(tmp);
      const copy = copyDigest(tmp);
      if (copy === undefined) throw new PluginLoadError(`${tmp} is over ${MAX_COPY_DIGEST_BYTES} bytes once built, or holds a file that cannot be read: example ${name} is not built`);
      await writeFile(join(tmp, BUILD_STAMP), `${toolVersion}:${copy}:${sources}`);
      // Copied with the source tree's modes (0775 folders, 0664 files from a umask-002 checkout).
      if (!(await closeToOthers(tmp))) throw new PluginLoadError(`${tmp} holds a file of another user's: example ${name} is not built`);
      // Another gateway of this user may finish the same example at the same moment: one rename each, theirs kept when it is this build.
      await publishBuild(tmp, to, buildingDir, () => isCurrentAt(to));
      return to;
    };
    if (options.defer) {
      // Whole, at once (another gateway walking it finds it gone, never half removed), and only the copy judged:
      // one another gateway put there since is judged again, and kept when it is this build.
      if (await moveAsideJudged(to, judged, buildingDir, isCurrentAt)) continue;
      options.defer(name, buildOne);
    } else {
      await buildOne();
    }
  }
  for (const stale of await readdir(modulesDir)) {
    if (!names.includes(stale) && !buildingElsewhere(stale)) await rm(join(modulesDir, stale), { recursive: true, force: true });
  }
  for (const left of await readdir(buildingDir)) {
    // This process's deferred builds have not started yet: anything of its pid here is a leftover too.
    if (!buildingElsewhere(left)) await rm(join(buildingDir, left), { recursive: true, force: true });
  }
  return modulesDir;
}

/**
 * Whether only this user could have written `path` and everything in it: each is this user's and
 * writable by nobody else (owner-only's rule, `whyOpenToOthers`). A link at `path` itself is no
 * copy of ours (whoever could write beside it may point it anywhere): false, and it is built anew
 * (`rm` removes the link, not what it leads to). A link inside is judged by its own owner (links
 * have no modes). Only judges: an open copy is built anew, never closed in place (a group member
 * may have rewritten its component while it was open, and the lock would vouch for it).
 */
async function isOwnOnly(path: string, top = true): Promise<boolean> {
  if (process.platform === 'win32') return true; // no owner bits to judge
  const st = await lstat(path).catch(() => undefined); // missing: nothing built yet
  if (st === undefined) return false;
  if (st.isSymbolicLink()) return !top && st.uid === currentUid();
  if (whyOpenToOthers(st, currentUid()) !== undefined) return false;
  if (!st.isDirectory()) return true;
  // Gone while walked (another gateway moved it aside): not a copy to use.
  const entries = await readdir(path).catch(() => undefined);
  if (entries === undefined) return false;
  for (const entry of entries) {
    if (!(await isOwnOnly(join(path, entry), false))) return false;
  }
  return true;
}

/**
 * Takes the group's and others' write bits off a fresh build folder of ours and everything in it:
 * it was copied with the source tree's modes (0775 folders, 0664 files from a umask-002 checkout),
 * and json-tools' lock entry grants reading its data/. Links are left as they are (chmod would
 * reach what they lead to). False when something in it is another user's: it cannot be closed.
 */
async function closeToOthers(path: string): Promise<boolean> {
  if (process.platform === 'win32') return true; // no owner bits to take off
  const st = await lstat(path);
  if (st.uid !== currentUid()) return false;
  if (st.isSymbolicLink()) return true;
  if (whyOpenToOthers(st, currentUid()) !== undefined) await chmod(path, st.mode & 0o7755);
  if (!st.isDirectory()) return true;
  for (const entry of await readdir(path)) {
    if (!(await closeToOthers(join(path, entry)))) return false;
  }
  return true;
}

/** The build stamp in `dir`, read as owner-only reads a file others may have put there: at most 4 KiB of a regular file, never a link, never waited on. */
function readStamp(dir: string): string | undefined {
  const read = readRegularFileSync(join(dir, BUILD_STAMP), { maxBytes: 4096 });
  return read.ok ? read.bytes.toString('utf8') : undefined;
}

/**
 * Whether the copy at `dir` is still what was built: its stamp names this recipe and these
 * sources, and the digest of the copy as built (its sources and components) it records is the
 * copy's now. The stamp alone said nothing of the files beside it: a copy whose component went
 * missing (a cache cleaner) or was cut short, or whose sources lost a file, was kept at every
 * start and the example never served again. Only reached for a copy `isOwnOnly` passed.
 * The stamp is `<tool version>:<copy digest>:<sources>`; the lock's `builtFromSources` reads its
 * last part.
 */
function isAsBuilt(dir: string, toolVersion: string, sources: string): boolean {
  const stamp = readStamp(dir);
  const head = `${toolVersion}:`;
  const tail = `:${sources}`;
  if (stamp === undefined || !stamp.startsWith(head) || !stamp.endsWith(tail) || stamp.length <= head.length + tail.length) return false;
  const copy = copyDigest(dir); // it covers the copy's sources too
  return copy !== undefined && stamp.slice(head.length, -tail.length) === copy;
}

/** What a build stamp records of a copy as built (32 hex digits of `builtCopyDigest`), or `undefined` when it is over the digest's bound or unreadable. */
function copyDigest(dir: string): string | undefined {
  return builtCopyDigest(dir)?.slice(0, 32);
}

/** The short form of `sourcesDigest` the build stamp keeps (32 hex digits). */
function hashTree(dir: string): string {
  return sourcesDigest(dir).slice('sha256:'.length, 'sha256:'.length + 32);
}

/**
 * Building plugins written in JavaScript into `chatty:plugin@0.3.0` components with
 * componentize-js, creating new ones from the template, and building the bundled examples once
 * for `serve`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { cp, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { userCacheDir } from '../../gateway/access/index.js';
import { PluginLoadError } from '../errors.js';
import { parseManifest } from '../manifest.js';
import { PLUGIN_WORLD, packageRoot, pluginWitPath } from '../world.js';

/** Where a plugin's JavaScript entry may live, in the order they are looked for. */
export const SOURCE_CANDIDATES = ['src/plugin.js', 'plugin.js', 'src/index.js', 'index.js'] as const;

/**
 * WASI features the JS engine is built without: a plugin gets no console, clock, random or
 * network, so the component imports nothing but `chatty:plugin/*` ("pure" mode).
 */
export const DISABLED_FEATURES = ['stdio', 'random', 'clocks', 'http', 'fetch-event'] as const;

export interface BuildResult {
  /** The component written (the manifest's `wasm`). */
  wasmPath: string;
  bytes: number;
  ms: number;
}

export function findPluginSource(dir: string): string {
  for (const candidate of SOURCE_CANDIDATES) {
    const path = join(dir, candidate);
    if (existsSync(path) && statSync(path).isFile()) return path;
  }
  throw new PluginLoadError(`no plugin source in ${dir}: expected one of ${SOURCE_CANDIDATES.join(', ')}`);
}

/** Builds `<dir>`'s JavaScript into the component its `module.toml` names (`[module] wasm`). */
export async function buildPlugin(dir: string): Promise<BuildResult> {
  const root = resolve(dir);
  const { manifest } = parseManifest(await readFile(join(root, 'module.toml'), 'utf8'));
  if (!manifest.module.wasm) throw new PluginLoadError('module.toml has no [module] wasm: a remote module is not built here');
  const wasmPath = join(root, manifest.module.wasm);
  const started = performance.now();
  const component = await componentizePlugin(findPluginSource(root));
  await mkdir(dirname(wasmPath), { recursive: true });
  await writeFile(wasmPath, component);
  return { wasmPath, bytes: component.length, ms: performance.now() - started };
}

async function componentizePlugin(sourcePath: string): Promise<Uint8Array> {
  const { componentize } = await import('@bytecodealliance/componentize-js');
  // The WIT goes in as text: componentize-js reads `witPath` through preview2-shim, which starts
  // with no preopens.
  const { component } = await componentize({
    sourcePath,
    witWorld: readFileSync(pluginWitPath(), 'utf8'),
    worldName: PLUGIN_WORLD,
    disableFeatures: [...DISABLED_FEATURES],
  } as unknown as { sourcePath: string });
  return component;
}

async function componentizeVersion(): Promise<string> {
  const mod = (await import('@bytecodealliance/componentize-js')) as { version?: string };
  return mod.version ?? 'unknown';
}

/** The bundled examples (`examples/plugins/` in the package). */
export function examplesDir(): string {
  return join(packageRoot(), 'examples', 'plugins');
}

export function templateDir(): string {
  return join(examplesDir(), 'template');
}

/**
 * `chatty-gateway plugin new <name>`: copies the template to `<parent>/<name>`, names it, and puts
 * the WIT beside it for reference. Refuses an existing directory.
 */
export async function newPlugin(name: string, parent: string): Promise<string> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    throw new PluginLoadError(`plugin name ${JSON.stringify(name)}: use letters, digits, ".", "_" or "-", starting with a letter or digit`);
  }
  const target = resolve(parent, name);
  if (existsSync(target)) throw new PluginLoadError(`${target} already exists`);
  await cp(templateDir(), target, { recursive: true, filter: (src) => !src.endsWith('.wasm') });
  const rename = (text: string): string => text.replaceAll('"template"', JSON.stringify(name)).replaceAll("'template'", `'${name}'`);
  for (const file of ['module.toml', 'src/plugin.js']) {
    const path = join(target, file);
    await writeFile(path, rename(await readFile(path, 'utf8')));
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
}

/**
 * Builds the bundled examples once and returns a modules directory to scan. Each example is
 * copied to `<cacheDir>/modules/<name>/` with its component built there; a stamp of its sources,
 * the WIT and componentize-js's version decides whether it is rebuilt. Built components never go
 * in the source tree.
 */
export async function ensureExamplesBuilt(source = examplesDir(), options: EnsureExamplesOptions = {}): Promise<string> {
  const cacheDir = options.cacheDir ?? join(userCacheDir(), 'chatty-gateway', 'examples');
  const modulesDir = join(cacheDir, 'modules');
  await mkdir(modulesDir, { recursive: true });
  const exclude = new Set(options.exclude ?? ['template']);
  const names = readdirSync(source, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !exclude.has(e.name) && existsSync(join(source, e.name, 'module.toml')))
    .map((e) => e.name)
    .sort();
  const toolVersion = `${await componentizeVersion()}:${createHash('sha256').update(readFileSync(pluginWitPath())).digest('hex')}`;
  for (const name of names) {
    const from = join(source, name);
    const stamp = `${toolVersion}:${hashTree(from)}`;
    const to = join(modulesDir, name);
    if (readStamp(to) === stamp) continue;
    options.onProgress?.(`building example plugin ${name} (componentize-js, a few seconds)…`);
    const tmp = `${to}.tmp-${process.pid}`;
    await rm(tmp, { recursive: true, force: true });
    await cp(from, tmp, { recursive: true, filter: (src) => !src.endsWith('.wasm') });
    await buildPlugin(tmp);
    await writeFile(join(tmp, '.build-stamp'), stamp);
    await rm(to, { recursive: true, force: true });
    await rename(tmp, to);
  }
  for (const stale of await readdir(modulesDir)) {
    if (!names.includes(stale)) await rm(join(modulesDir, stale), { recursive: true, force: true });
  }
  return modulesDir;
}

function readStamp(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, '.build-stamp'), 'utf8');
  } catch {
    return undefined;
  }
}

/** SHA-256 over the relative paths and contents of a directory's files (built .wasm left out). */
function hashTree(dir: string): string {
  const hash = createHash('sha256');
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && !entry.name.endsWith('.wasm')) hash.update(relative(dir, full)).update('\0').update(readFileSync(full));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 32);
}

import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PluginLoadError, messageOf } from '../errors.js';
import { MAX_COMPONENT_BYTES, MAX_MANIFEST_BYTES } from '../limits.js';
import { parseManifest } from '../manifest.js';
import { readRegularFileSync } from '../regular-file-sync.js';
import { pluginAsks } from './asks.js';
import { componentDigest } from './digest.js';
import type { CapabilityAsk } from './types.js';

/** What one module directory asks for, as a registry serving it would ask: for `chatty-gateway plugin grant`. */
export interface ModuleAsks {
  name: string;
  version: string;
  dir: string;
  /** `sha256:<hex>` of its component as it is now. */
  digest: string;
  asks: CapabilityAsk[];
}

/**
 * Finds module `name` in `modulesDir` (the folder `serve --modules-dir` is given: each
 * subdirectory with a `module.toml`, matched by the name it declares) and says what it asks for,
 * as `serve` asks: `file` and `network` from its manifest (serve has no llm or billing provider, so
 * those are never asked there). Throws `PluginLoadError` saying what is missing.
 */
export function moduleAsks(modulesDir: string, name: string): ModuleAsks {
  const root = resolve(modulesDir);
  let entries: string[];
  try {
    entries = readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch (err) {
    throw new PluginLoadError(`cannot read the modules directory ${root}: ${messageOf(err)}`);
  }
  const found: string[] = [];
  for (const entry of entries) {
    const dir = join(root, entry);
    if (!existsSync(join(dir, 'module.toml'))) continue;
    let manifest;
    try {
      // Never waited on or read whole: a neighbour's module.toml may be a FIFO or /dev/zero.
      manifest = parseManifest(readRegularFileSync(join(dir, 'module.toml'), MAX_MANIFEST_BYTES).toString('utf8')).manifest;
    } catch {
      continue; // a broken neighbour is serve's to report, not this command's
    }
    found.push(manifest.module.name);
    if (manifest.module.name !== name) continue;
    if (manifest.module.wasm === undefined) throw new PluginLoadError(`module ${name} in ${dir} is remote (execution_mode = "${manifest.module.execution_mode}"): it runs elsewhere, with nothing to grant here`);
    const component = join(dir, manifest.module.wasm);
    let bytes: Uint8Array;
    try {
      bytes = readComponentAsServed(dir, component);
    } catch (err) {
      if (err instanceof PluginLoadError) throw err;
      throw new PluginLoadError(`module ${name}'s component ${component} cannot be read (${(err as NodeJS.ErrnoException).code ?? messageOf(err)}): a grant is pinned to the component, so build it first`);
    }
    return { name, version: manifest.module.version, dir, digest: componentDigest(bytes), asks: pluginAsks({ manifest, imports: [], providers: {} }) };
  }
  const names = found.length > 0 ? `the modules there: ${found.join(', ')}` : 'it holds no module';
  throw new PluginLoadError(`no module named ${JSON.stringify(name)} in ${root} (${names}); give the folder serve serves with --modules-dir`);
}

/**
 * The component's bytes as `serve` would take them: its real path inside the module folder's (a
 * grant for a file outside, which serve refuses to load, would grant nothing that runs), a regular
 * file of at most `MAX_COMPONENT_BYTES`, opened without following a link or blocking.
 */
function readComponentAsServed(dir: string, component: string): Uint8Array {
  const realDir = realpathSync(dir);
  const real = realpathSync(component);
  const rel = relative(realDir, real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new PluginLoadError(`the component ${component} resolves to ${real}, outside the module directory ${realDir}: serve refuses to load it, so it is not granted`);
  }
  return readRegularFileSync(real, MAX_COMPONENT_BYTES, { noFollow: true });
}

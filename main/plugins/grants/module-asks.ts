import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PluginLoadError, messageOf } from '../errors.js';
import { readInsideModule, readModuleManifest } from '../inside-module.js';
import { MAX_COMPONENT_BYTES } from '../limits.js';
import { parseManifest } from '../manifest.js';
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
 * those are never asked there). Its module.toml and component are read as serve reads them
 * (`inside-module.ts`): inside the module folder, regular files, bounded, never waited on. Throws
 * `PluginLoadError` saying what is missing.
 */
export async function moduleAsks(modulesDir: string, name: string): Promise<ModuleAsks> {
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
    let manifest;
    try {
      // Never waited on or read whole (a neighbour's module.toml may be a FIFO or /dev/zero), nor through a link outside its folder.
      const text = await readModuleManifest(dir);
      if (text === undefined) continue;
      manifest = parseManifest(text).manifest;
    } catch {
      continue; // a broken neighbour is serve's to report, not this command's
    }
    found.push(manifest.module.name);
    if (manifest.module.name !== name) continue;
    if (manifest.module.wasm === undefined) throw new PluginLoadError(`module ${name} in ${dir} is remote (execution_mode = "${manifest.module.execution_mode}"): it runs elsewhere, with nothing to grant here`);
    const component = join(dir, manifest.module.wasm);
    let bytes: Uint8Array;
    try {
      bytes = await readInsideModule(dir, component, MAX_COMPONENT_BYTES, (problem) => `the component ${component} ${problem}: serve refuses to load it, so it is not granted`);
    } catch (err) {
      if (err instanceof PluginLoadError) throw err;
      throw new PluginLoadError(`module ${name}'s component ${component} cannot be read (${(err as NodeJS.ErrnoException).code ?? messageOf(err)}): a grant is pinned to the component, so build it first`);
    }
    return { name, version: manifest.module.version, dir, digest: componentDigest(bytes), asks: pluginAsks({ manifest, imports: [], providers: {} }) };
  }
  const names = found.length > 0 ? `the modules there: ${found.join(', ')}` : 'it holds no module';
  throw new PluginLoadError(`no module named ${JSON.stringify(name)} in ${root} (${names}); give the folder serve serves with --modules-dir`);
}

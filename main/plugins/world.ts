import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PluginLoadError } from './errors.js';

/** The interface every plugin exports. */
export const PLUGIN_INTERFACE = 'chatty:plugin/plugin@0.3.0';
export const PLUGIN_PACKAGE_VERSION = '0.3.0';
export const PLUGIN_WORLD = 'plugin-world';

/** The host interfaces a plugin may import (each is served, granted or not). */
export const CHATTY_IMPORTS = ['types', 'llm', 'config', 'logging', 'file', 'billing'] as const;

/**
 * WASI's basics, served by preview2-shim with no preopens, no sockets and an empty environment.
 * Anything else (`wasi:sockets/*`, `wasi:http/incoming-handler`, an unknown package) is refused at load.
 */
export const ALLOWED_WASI = new Set([
  'wasi:cli/environment', 'wasi:cli/exit', 'wasi:cli/stdin', 'wasi:cli/stdout', 'wasi:cli/stderr',
  'wasi:cli/terminal-input', 'wasi:cli/terminal-output', 'wasi:cli/terminal-stdin',
  'wasi:cli/terminal-stdout', 'wasi:cli/terminal-stderr',
  'wasi:io/error', 'wasi:io/streams', 'wasi:io/poll',
  'wasi:clocks/wall-clock', 'wasi:clocks/monotonic-clock',
  'wasi:random/random', 'wasi:random/insecure', 'wasi:random/insecure-seed',
  'wasi:filesystem/types', 'wasi:filesystem/preopens',
  // The guest's fetch: served by the host's own wasi:http (plugins/network/), which reaches only
  // what a granted [network] allow-list names; without the grant every request is refused.
  'wasi:http/types', 'wasi:http/outgoing-handler',
]);

/** What a component's root world imports and exports, as `componentWit` prints it. */
export interface ComponentWorld {
  readonly imports: readonly string[];
  readonly exports: readonly string[];
}

/** Reads the `world root { … }` block of `componentWit` output. */
export function parseComponentWorld(wit: string): ComponentWorld {
  const start = wit.search(/world\s+root\s*\{/);
  if (start < 0) throw new PluginLoadError('component: could not read its world');
  const imports: string[] = [];
  const exports: string[] = [];
  let depth = 0;
  const body = wit.slice(wit.indexOf('{', start));
  for (const line of body.split('\n')) {
    const trimmed = line.trim();
    if (depth === 1) {
      const m = /^(import|export)\s+([^;{]+?)\s*[;{]/.exec(trimmed);
      if (m) (m[1] === 'import' ? imports : exports).push(m[2]!.replace(/:\s*(func|interface)\b.*$/, ''));
    }
    depth += (trimmed.match(/\{/g) ?? []).length - (trimmed.match(/\}/g) ?? []).length;
    if (depth <= 0 && trimmed.includes('}')) break;
  }
  return { imports, exports };
}

/** Strips `@version` from `ns:pkg/iface@version`. */
export function unversioned(name: string): string {
  const at = name.indexOf('@');
  return at < 0 ? name : name.slice(0, at);
}

/** Refuses a component that does not export the plugin interface or imports beyond the allow-list. */
export function checkWorld(world: ComponentWorld): void {
  if (!world.exports.includes(PLUGIN_INTERFACE)) {
    const targets = world.exports.length ? world.exports.join(', ') : 'nothing';
    throw new PluginLoadError(`component does not export ${PLUGIN_INTERFACE}; it targets ${targets}`);
  }
  for (const name of world.imports) {
    const bare = unversioned(name);
    if (bare.startsWith('chatty:plugin/')) {
      const iface = bare.slice('chatty:plugin/'.length);
      if ((CHATTY_IMPORTS as readonly string[]).includes(iface) && name.endsWith(`@${PLUGIN_PACKAGE_VERSION}`)) continue;
      throw new PluginLoadError(`component imports ${name}, which this host does not provide (it serves chatty:plugin/*@${PLUGIN_PACKAGE_VERSION})`);
    }
    if (ALLOWED_WASI.has(bare) && /@0\.2\.\d+$/.test(name)) continue;
    throw new PluginLoadError(`component imports ${name}, which plugins may not use (allowed: WASI cli, io, clocks, random, filesystem without preopens, http's outgoing handler, and chatty:plugin/*)`);
  }
}

/** The package's root directory (holds package.json), found from this file in `main/` or `out/main/`. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'main', 'plugins', 'wit', 'plugin.wit'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('chatty-protocol-gateway: cannot find the package root (main/plugins/wit/plugin.wit)');
    dir = parent;
  }
}

/** The WIT file of `chatty:plugin@0.3.0`, shipped with the package. */
export function pluginWitPath(): string {
  return join(packageRoot(), 'main', 'plugins', 'wit', 'plugin.wit');
}

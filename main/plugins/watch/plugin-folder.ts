import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { sourcesNewerThan } from '../build/build-hints.js';
import { pluginSourceIn } from '../build/plugin-source.js';
import { MAX_MANIFEST_BYTES } from '../limits.js';
import { parseManifest } from '../manifest.js';
import { readRegularFileSync } from '../../owner-only/index.js';

/**
 * What a plugin folder looks like now, as far as serving it goes: its `module.toml` (by content)
 * and its component (by size, time and inode: hashing a 12 MB component on every event is not
 * worth it). Two looks that are equal serve the same thing. Undefined: no plugin here (the folder
 * or its `module.toml` is gone, or it is a file).
 */
export interface FolderLook {
  /** The module name its `module.toml` says, if it parses. */
  readonly name: string | undefined;
  readonly manifest: string;
  readonly component: string;
  /** The component's path (the manifest's `wasm`, else `plugin.wasm`). */
  readonly wasmPath: string;
  /** Its JavaScript entry, for a plugin `plugin build` builds. */
  readonly source: string | undefined;
}

export function lookAt(dir: string): FolderLook | undefined {
  const read = readRegularFileSync(join(dir, 'module.toml'), { maxBytes: MAX_MANIFEST_BYTES, noFollow: false });
  if (!read.ok && (read.why === 'missing' || /^ENOTDIR\b/.test(read.message))) return undefined;
  // Unreadable (or a FIFO, a device, a huge file): still a plugin folder; loading it says why.
  const text = read.ok ? read.bytes.toString('utf8') : `unreadable: ${read.message}`;
  let name: string | undefined;
  let wasm = 'plugin.wasm';
  try {
    const { manifest } = parseManifest(text);
    name = manifest.module.name;
    wasm = manifest.module.wasm ?? wasm;
  } catch {
    // A bad manifest: loading it says why.
  }
  const wasmPath = join(dir, wasm);
  return {
    name,
    manifest: createHash('sha256').update(text).digest('hex'),
    component: componentStamp(wasmPath),
    wasmPath,
    source: pluginSourceIn(dir),
  };
}

/** Whether the two looks serve something different. */
export function changed(before: FolderLook, now: FolderLook): boolean {
  return before.manifest !== now.manifest || before.component !== now.component;
}

/** A build that is due: why, and the newest source's time (a failed build is not retried until a source is newer still). */
export interface BuildDue {
  readonly why: string;
  readonly newestMs: number;
}

/**
 * A plugin written in JavaScript whose component is missing or older than one of its sources:
 * `plugin build` is due. Sources no newer than `triedMs` (those a build already failed on) do
 * not count: a failed build is tried again once a source changes again.
 */
export function buildDue(dir: string, look: FolderLook, triedMs = -Infinity): BuildDue | undefined {
  if (look.source === undefined) return undefined;
  if (look.component === 'missing') {
    const newestMs = mtimeOf(look.source);
    return newestMs > triedMs ? { why: 'no component yet', newestMs } : undefined;
  }
  const newer = sourcesNewerThan(dir, look.wasmPath).filter((rel) => mtimeOf(join(dir, rel)) > triedMs);
  if (newer.length === 0) return undefined;
  const newestMs = Math.max(...newer.map((rel) => mtimeOf(join(dir, rel))));
  return { why: `${newer.slice(0, 3).join(', ')}${newer.length > 3 ? ` and ${newer.length - 3} more` : ''} changed`, newestMs };
}

/** A file's modification time, or -Infinity when it is not there. */
export function mtimeOf(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? -Infinity;
}

function componentStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return 'missing';
  }
}

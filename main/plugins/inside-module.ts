/**
 * "A file inside the module folder": the one reader of a module's own files (its module.toml, its
 * component), shared by `serve` (the registry) and `plugin grant` (grants/module-asks.ts), so the
 * command grants exactly what serve would read.
 */
import { constants, lstatSync, type Stats } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { PluginLoadError, messageOf } from './errors.js';
import { MAX_MANIFEST_BYTES, MIB } from './limits.js';
import { pageBackedBytes } from './page-bytes.js';

/**
 * A module directory's `module.toml`, or `undefined` when it has none. Read as the component is
 * (`readInsideModule`), at most 1 MiB, and it must be UTF-8. Anything else is a
 * `PluginLoadError` that says why, never a silent skip.
 */
export async function readModuleManifest(moduleDir: string): Promise<string | undefined> {
  const path = join(moduleDir, 'module.toml');
  try {
    lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new PluginLoadError(`cannot read module.toml: ${(err as NodeJS.ErrnoException).code ?? messageOf(err)}`);
  }
  const bytes = await readInsideModule(moduleDir, path, MAX_MANIFEST_BYTES, (problem) => `cannot read module.toml: it ${problem}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new PluginLoadError('cannot read module.toml: it is not UTF-8');
  }
}

/**
 * A file of the module, read only if its real path lies inside the module directory's real path
 * (so `wasm = "lib/plugin.wasm"` with `lib -> /elsewhere` is refused, not just a final symlink).
 * It is opened without blocking (a FIFO never stalls the load), and the decision is made on the
 * opened descriptor, as `file.read-bytes` does: a regular file of at most `maxBytes`, still inside
 * the module (a path swapped for a symlink between the check and the open is refused too).
 * `say` turns a problem ("is not a regular file") into the refusal's message.
 */
export async function readInsideModule(dir: string, path: string, maxBytes: number, say: (problem: string) => string): Promise<Uint8Array> {
  const realDir = await moduleRealPath(dir);
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new PluginLoadError(say(code === 'ENOENT' ? 'does not exist' : `cannot be resolved (${code ?? messageOf(err)})`));
  }
  if (real === realDir) throw new PluginLoadError(say('is the module directory, not a regular file'));
  if (!isWithin(real, realDir)) throw new PluginLoadError(say(`resolves to ${real}, outside the module directory ${realDir}; refused`));
  let file: FileHandle;
  try {
    file = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    throw new PluginLoadError(say(`cannot be opened (${(err as NodeJS.ErrnoException).code ?? messageOf(err)})`));
  }
  try {
    const st = await file.stat();
    if (!st.isFile()) throw new PluginLoadError(say('is not a regular file'));
    const opened = await openedRealPath(file.fd, real, st);
    if (opened === undefined || !isWithin(opened, realDir)) throw new PluginLoadError(say('moved out of the module directory while being opened; refused'));
    if (st.size > maxBytes) throw new PluginLoadError(say(`is over ${maxBytes / MIB} MiB`));
    const bytes = pageBackedBytes(st.size); // a component: not from the C allocator's heap
    let at = 0;
    while (at < bytes.length) {
      const { bytesRead } = await file.read(bytes, at, bytes.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return at === bytes.length ? bytes : bytes.subarray(0, at);
  } finally {
    await file.close();
  }
}

/** The module directory's real path: a symlinked module directory is fine, compared real to real. */
export async function moduleRealPath(dir: string): Promise<string> {
  try {
    return await realpath(dir);
  } catch (err) {
    throw new PluginLoadError(`the module directory ${dir} cannot be resolved (${messageOf(err)})`);
  }
}

/** `real` is `realDir` itself or lies below it (both real paths); a `..foo` name is still inside. */
export function isWithin(real: string, realDir: string): boolean {
  const rel = relative(realDir, real);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Where an open descriptor really is. Linux: the kernel's answer (`/proc/self/fd/<n>`). Elsewhere:
 * the path re-resolved, accepted only if it still names the very inode that was opened.
 */
export async function openedRealPath(fd: number, opened: string, st: Stats): Promise<string | undefined> {
  if (process.platform === 'linux') {
    try {
      const link = await readlink(`/proc/self/fd/${fd}`);
      return link.endsWith(' (deleted)') ? undefined : link;
    } catch {
      // no /proc: the portable check below
    }
  }
  try {
    const real = await realpath(opened);
    const now = lstatSync(real);
    return now.dev === st.dev && now.ino === st.ino ? real : undefined;
  } catch {
    return undefined;
  }
}

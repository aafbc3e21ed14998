import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

export type ReadResult = { tag: 'ok'; val: Uint8Array } | { tag: 'err'; val: string };

/**
 * `file.read-bytes` below `root`, with every refusal of PROTOCOL-NOTES §4: absolute paths, drive
 * letters, `\`, `..`, anything whose real path (symlinks followed) leaves the root, non-regular
 * files and files over `maxBytes`. Synchronous on purpose: it runs on the guest's own worker
 * thread, never on the main thread.
 */
export function readBelowRoot(root: string, path: string, maxBytes: number): ReadResult {
  const refuse = (why: string): ReadResult => ({ tag: 'err', val: `file: ${JSON.stringify(path)}: ${why}` });
  if (path.startsWith('/') || path.startsWith('\\')) return refuse('absolute paths are refused');
  if (/^[A-Za-z]:/.test(path)) return refuse('drive letters are refused');
  if (path.includes('\\')) return refuse('"\\" is refused; use "/"');
  if (path.includes('\0')) return refuse('NUL bytes are refused');
  if (path.split('/').includes('..')) return refuse('".." is refused');
  let realRoot: string;
  let target: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return refuse('the module\'s [files] root does not exist');
  }
  try {
    target = realpathSync(join(realRoot, path));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return refuse(code === 'ENOENT' ? 'no such file' : `cannot resolve (${code ?? 'error'})`);
  }
  if (target !== realRoot && !target.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
    return refuse('its real path leaves the [files] root');
  }
  let fd: number | undefined;
  try {
    // stat before open: opening a FIFO for reading would block until a writer came.
    if (!statSync(target).isFile()) return refuse('not a regular file');
    fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile()) return refuse('not a regular file');
    if (st.size > maxBytes) return refuse(`${st.size} bytes is over the ${maxBytes}-byte limit`);
    const out = new Uint8Array(st.size);
    let at = 0;
    while (at < out.length) {
      const n = readSync(fd, out, at, out.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return { tag: 'ok', val: at === out.length ? out : out.subarray(0, at) };
  } catch (err) {
    return refuse(`cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

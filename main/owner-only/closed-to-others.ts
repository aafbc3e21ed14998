import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The one rule for "only this user could have written it": owned by `uid` (or, for a folder
 * above it, by root) and writable by nobody else. A folder others may write but that has the
 * sticky bit (/tmp) passes when `sticky` is allowed: there nobody can rename or remove what is
 * not theirs. `undefined` when the rule holds, else why not (for a message).
 */
export function whyOpenToOthers(st: Stats, uid: number, options: { rootMayOwn?: boolean; sticky?: boolean } = {}): string | undefined {
  if (st.uid !== uid && !(options.rootMayOwn && st.uid === 0)) return `is owned by another user (uid ${st.uid})`;
  if ((st.mode & 0o022) === 0) return undefined;
  if (options.sticky && st.isDirectory() && (st.mode & 0o1000) !== 0) return undefined;
  return `is writable by ${st.mode & 0o002 ? 'others' : 'its group'} (mode ${(st.mode & 0o7777).toString(8)})`;
}

/**
 * Why a folder above `path` (its parent up to `/`) would let someone else replace `path`, or
 * `undefined`: each must be this user's or root's and writable by nobody else unless sticky.
 * Walked both as named and as the real path: a link among the folders is itself safe when its
 * folder is (links have no modes of their own), and what it leads to is judged on the real walk.
 */
export function whyAncestorsOpen(path: string, uid: number): string | undefined {
  const named = resolve(path);
  let real: string;
  try {
    real = realpathSync(named);
  } catch (err) {
    return `${named} cannot be checked (${(err as Error).message})`;
  }
  for (const start of new Set([named, real])) {
    for (let at = dirname(start); ; at = dirname(at)) {
      let st: Stats;
      try {
        st = lstatSync(at);
      } catch (err) {
        return `${at} cannot be checked (${(err as Error).message})`;
      }
      const why = st.isSymbolicLink() ? undefined : whyOpenToOthers(st, uid, { rootMayOwn: true, sticky: true });
      if (why) return `${at} ${why}`;
      if (dirname(at) === at) break;
    }
  }
  return undefined;
}

/**
 * Why `folder` is not a folder only this user could have changed, or `undefined`: the one rule
 * for a folder whose contents are trusted (the examples' build folder, the transpile cache, where
 * a lock vouches for a component). It is itself a folder, not a link (a link is nobody's folder:
 * whoever may write beside it can point it elsewhere), of `uid`'s, writable by nobody else, and
 * every folder above it passes `whyAncestorsOpen`. It only judges: nothing is changed.
 */
export function whyFolderChainOpen(folder: string, uid: number): string | undefined {
  let st: Stats;
  try {
    st = lstatSync(folder);
  } catch (err) {
    return `${folder} cannot be checked (${(err as Error).message})`;
  }
  if (st.isSymbolicLink()) return `${folder} is a symbolic link`;
  if (!st.isDirectory()) return `${folder} is not a folder`;
  const why = whyOpenToOthers(st, uid);
  if (why) return `${folder} ${why}`;
  return whyAncestorsOpen(folder, uid);
}

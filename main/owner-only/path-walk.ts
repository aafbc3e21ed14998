import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** As the kernel's limit on links followed in one lookup (ELOOP). */
const MAX_LINKS = 40;

/** Where a walk ended: the real path of the file, a folder (or a link followed) judged open and why, or nothing there. */
export type PathWalk = { real: string } | { folder: string; why: string; link?: true } | { gone: true };

/**
 * Walks `path` one name at a time, as the kernel looks it up, following each symbolic link, and
 * judges every folder a name is looked up in: the folders above the path, each link's own folder
 * and, for a link to an absolute path, every folder from `/` down to its target. Whoever may write
 * one of them could rename or re-point what comes next (a link in the middle of a chain, a
 * folder above the file), so all of them are asked, as OpenSSH's StrictModes and sudo walk a path.
 * Each link followed is judged too (its own lstat): in a sticky folder others may write (/tmp),
 * a link's owner may replace it. `judge` gives why a folder or link is open (or undefined);
 * nothing is changed.
 */
export function walkPath(path: string, judge: (folder: string, st: Stats) => string | undefined): PathWalk {
  const pending = resolve(path).split('/').filter((name) => name !== '');
  let at = '/';
  let links = 0;
  const judged = new Set<string>();
  const judgeOnce = (folder: string): string | undefined => {
    if (judged.has(folder)) return undefined;
    judged.add(folder);
    let st: Stats;
    try {
      st = lstatSync(folder);
    } catch {
      return undefined; // gone meanwhile: the lookup below says so
    }
    return judge(folder, st);
  };
  for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
    if (name === '.') continue;
    if (name === '..') {
      at = dirname(at); // `at` holds no link: its parent is the real one
      continue;
    }
    const why = judgeOnce(at);
    if (why !== undefined) return { folder: at, why };
    const next = join(at, name);
    let st: Stats;
    try {
      st = lstatSync(next);
    } catch {
      return { gone: true };
    }
    if (st.isSymbolicLink()) {
      if (++links > MAX_LINKS) return { gone: true };
      const whyLink = judge(next, st);
      if (whyLink !== undefined) return { folder: next, why: whyLink, link: true };
      let target: string;
      try {
        target = readlinkSync(next);
      } catch {
        return { gone: true };
      }
      if (target.startsWith('/')) at = '/';
      pending.unshift(...target.split('/').filter((part) => part !== ''));
      continue;
    }
    if (pending.length > 0 && !st.isDirectory()) return { gone: true };
    at = next;
  }
  return { real: at };
}

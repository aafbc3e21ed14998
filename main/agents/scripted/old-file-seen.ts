import type { BigIntStats } from 'node:fs';

/**
 * The file a write's diff stat was counted against, which the person approves replacing: `null`
 * for none there (a new file), else that file as the descriptor read said it was (device, inode,
 * size, change and modification times). The write replaces only that (`replaceFileContent`): else
 * the file replaced or edited while the person decided (their own editor, another worker of a
 * shared folder) was replaced by a write approved as `+1 -1`, lines no one was shown lost.
 */
export type OldFileSeen = null | {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly ctimeNs: bigint;
  readonly mtimeNs: bigint;
};

/** The file `stat` (a descriptor's, `bigint`) describes, as seen. */
export function seenOf(stat: BigIntStats): OldFileSeen {
  return { dev: stat.dev, ino: stat.ino, size: stat.size, ctimeNs: stat.ctimeNs, mtimeNs: stat.mtimeNs };
}

/**
 * Whether the file there now (`now`, its descriptor's `fstat`; undefined for none) is the one
 * `seen`: the same inode, unchanged since (its change time moves with any write, link or
 * permission change, and no user can set it back).
 */
export function isAsSeen(seen: OldFileSeen, now: BigIntStats | undefined): boolean {
  if (seen === null || now === undefined) return seen === null && now === undefined;
  return now.dev === seen.dev && now.ino === seen.ino && now.size === seen.size && now.ctimeNs === seen.ctimeNs && now.mtimeNs === seen.mtimeNs;
}

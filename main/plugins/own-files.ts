import type { Stats } from 'node:fs';
import { currentUid, whyOpenToOthers } from '../owner-only/index.js';

/**
 * Whether what `st` describes is this user's own and writable by nobody else (owner-only's rule,
 * `whyOpenToOthers`), so that only this user could have put its bytes there: the transpile cache
 * runs nothing else, and a lock entry pinned to sources grants no other component. Windows has no
 * owner bits to judge: true there.
 */
function ownOnly(st: Stats): boolean {
  return process.platform === 'win32' || whyOpenToOthers(st, currentUid()) === undefined;
}

/** A regular file (not a link) of this user's own, writable by nobody else. */
export const ownFile = (st: Stats): boolean => st.isFile() && ownOnly(st);
/** A folder (not a link) of this user's own, writable by nobody else. */
export const ownFolder = (st: Stats): boolean => st.isDirectory() && ownOnly(st);

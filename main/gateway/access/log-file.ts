import { lstatSync, rmSync } from 'node:fs';
import { AccessError } from '../../owner-only/index.js';

/**
 * Makes `path` safe to hand to a logger that opens it by path with flag 'a' (electron-log
 * follows links): a symlink or any other non-regular file there (planted in the runtime
 * directory) is removed, as the token file's is, so the logger creates a fresh file of its own and
 * a link's target is never written. A regular file is kept (the log goes on); a directory is
 * refused with a message naming it.
 */
export function claimLogFile(path: string): void {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined || stat.isFile()) return;
  if (stat.isDirectory()) throw new AccessError(`${path} is not a regular file (a directory); remove it so the gateway can log there`);
  rmSync(path, { force: true });
}

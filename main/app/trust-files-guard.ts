// The files the app trusts are never files the agents may write: the gateway's approvals file
// (its "always" rules) and the plugins' grants file must lie outside the workspace of a gateway a
// bridge is attached to. Else one ordinary approved write (asked as a plain write, Approve by
// default) would add an "always allow" rule or grant a plugin files and network access, live.
import { readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isInside } from '../broker/spawn-context.js';
import type { ProtocolGateway } from '../gateway/index.js';

/** Links followed for a path that does not exist yet, at most (as the kernel's own limit). */
const MAX_LINK_HOPS = 40;

/**
 * Where a write to `path` would land: its real path; for a part that does not exist yet, where a
 * link to nowhere leads, else the name under its parent's real path (the file is made later).
 */
function landsAt(path: string, hops = 0): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    // Not there (yet): below.
  }
  if (hops < MAX_LINK_HOPS) {
    try {
      return landsAt(resolve(dirname(absolute), readlinkSync(absolute)), hops + 1);
    } catch {
      // Not a link: below.
    }
  }
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(landsAt(parent, hops), basename(absolute));
}

/**
 * Throws, naming the file, when `gateway`'s workspace holds its approvals file or one of
 * `trustFiles` (the grants file…), wherever their links lead.
 */
export function refuseTrustFilesInWorkspace(gateway: ProtocolGateway, trustFiles: readonly string[]): void {
  const workspace = gateway.broker.workspaceRoot; // a real path already: the broker resolved it once
  if (workspace === undefined) return;
  const approvals = gateway.approvals.file;
  const files = [...(approvals === undefined ? [] : [approvals]), ...trustFiles];
  for (const file of files) {
    const real = landsAt(file);
    if (isInside(real, workspace)) {
      throw new Error(
        `the agents' workspace ${workspace} holds the app's own file ${file}${real === resolve(file) ? '' : ` (${real})`}: one approved write of it would grant a plugin or add an "always allow" rule; give the agents a workspace that does not hold the app's files (not the home folder when they are under ~/.config)`,
      );
    }
  }
}

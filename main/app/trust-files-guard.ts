// The files the app trusts are never files the agents may write: the gateway's approvals file
// (its "always" rules) and the plugins' grants file must lie outside the workspace of a gateway a
// bridge is attached to. Else one ordinary approved write (asked as a plain write, Approve by
// default) would add an "always allow" rule or grant a plugin files and network access, live.
import { resolve } from 'node:path';
import { landing } from '../broker/approvals/sensitive-paths.js';
import { isInside } from '../broker/spawn-context.js';
import type { ProtocolGateway } from '../gateway/index.js';

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
    // Where a write of it lands, as the approvals judge a write's landing: links followed, a
    // link to what is not made yet too.
    const real = landing(resolve(file));
    if (real === undefined) {
      // A link loop (past 40 links): a loop through the workspace is one an agent can end there.
      throw new Error(`the app's own file ${file} cannot be followed to where a write of it lands (a loop of links?): it cannot be checked against the agents' workspace ${workspace}`);
    }
    if (isInside(real, workspace)) {
      throw new Error(
        `the agents' workspace ${workspace} holds the app's own file ${file}${real === resolve(file) ? '' : ` (${real})`}: one approved write of it would grant a plugin or add an "always allow" rule; give the agents a workspace that does not hold the app's files (not the home folder when they are under ~/.config)`,
      );
    }
  }
}

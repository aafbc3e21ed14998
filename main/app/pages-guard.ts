// The page the bridge trusts is never a file the agents may write: a `pages` folder served by
// handleAppProtocol and the workspace root of a gateway a bridge is attached to must be apart
// (neither is, holds or lies inside the other, compared as real paths). Else one approved write of
// `page.js` would make an agent's script the page that answers every later approval. The same holds
// for this package's own folder: the popover module and demo page served from it, and the preload
// every window runs (an agent's preload calls the bridge as the page).
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isInside } from '../broker/spawn-context.js';
import { holdCounted } from './counted-hold.js';
import { PACKAGE_ROOT } from './package-root.js';

/** The real paths of the folders kept from the agents (the `pages` folders served, the preload copies), with what each is. */
const servedPages = new Map<string, string>();
/** The real workspace roots of the gateways with a bridge attached, with how many bridges each. */
const bridgedWorkspaces = new Map<string, number>();

function refuseOverlap(pages: string, workspace: string, what = servedPages.get(pages) ?? 'the pages folder'): void {
  if (isInside(pages, workspace) || isInside(workspace, pages)) {
    throw new Error(
      `${what} ${pages} and the agents' workspace ${workspace} overlap: an agent's write there would become the page that answers approvals; serve the pages from a folder outside the workspace (and give the agents a workspace of their own)`,
    );
  }
}

/**
 * A folder (a real path) whose files a window runs, kept from the agents as a `pages` folder is:
 * refused now when a bridged gateway's workspace overlaps it, and a bridge attached later to a
 * gateway working in it or around it is refused. `what` names it in the refusal.
 */
export function keepFromWorkspaces(real: string, what: string): void {
  for (const workspace of bridgedWorkspaces.keys()) refuseOverlap(real, workspace, what);
  servedPages.set(real, what);
}

/**
 * A `pages` folder is about to be served: refused when it does not exist or is not a folder (a
 * link to nowhere yet would be checked where it lies and later lead wherever its target appears,
 * in the workspace too), and when a bridged gateway's workspace overlaps it. Returns its real
 * path, the folder to serve from: the one checked, whatever later becomes of a link on the way
 * (a link that lies in the workspace, re-pointed by an agent, reaches nothing).
 */
export function servePagesFolder(pages: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(pages));
  } catch {
    throw new Error(`the pages folder ${pages} does not exist (or leads through a link to nowhere): create it before serving it`);
  }
  if (!statSync(real).isDirectory()) throw new Error(`the pages folder ${pages} is not a folder (${real})`);
  keepFromWorkspaces(real, 'the pages folder');
  return real;
}

/** The real workspace folders of every gateway with a bridge attached (its root and the folders named for it), whichever gateway. */
export function bridgedWorkspaceFolders(): string[] {
  return [...bridgedWorkspaces.keys()];
}

/** The package's folder as a real path (links in the way resolved once, as the pages folder's). */
let ownFolder: string | undefined;

/** Whether `workspace` (a real path) is, holds or lies in this package's folder. */
export function overlapsOwnFolder(workspace: string): boolean {
  ownFolder ??= realpathSync(PACKAGE_ROOT);
  return isInside(ownFolder, workspace) || isInside(workspace, ownFolder);
}

/**
 * A bridge is about to be attached to a gateway whose agents write in `workspaces` (real paths,
 * agent-workspaces.ts): refused when one overlaps a served pages folder, a preload copy folder or
 * this package's own folder. Returns the function that forgets them (the bridge detached).
 */
export function bridgeWorkspaces(workspaces: readonly string[]): () => void {
  for (const real of workspaces) {
    for (const pages of servedPages.keys()) refuseOverlap(pages, real);
    if (overlapsOwnFolder(real)) {
      throw new Error(
        `the agents' workspace ${real} and this package's folder ${ownFolder} overlap: an agent's write there would become the popover or the preload that answers approvals; give the agents a workspace apart from the app and its node_modules (CHATTY_WORKSPACE)`,
      );
    }
  }
  return holdCounted(bridgedWorkspaces, workspaces);
}

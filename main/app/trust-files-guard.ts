// The files the app trusts are never files the agents may write: the gateway's approvals file
// (its "always" rules) and the plugins' grants file must lie outside the workspace of a gateway a
// bridge is attached to. Else one ordinary approved write (asked as a plain write, Approve by
// default) would add an "always allow" rule or grant a plugin files and network access, live.
import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { landing } from '../broker/approvals/sensitive-paths.js';
import { isInside } from '../broker/spawn-context.js';
import type { ProtocolGateway } from '../gateway/index.js';
import { holdCounted } from './counted-hold.js';
import { bridgedWorkspaceFolders } from './pages-guard.js';

/**
 * The app's own files of every bridge attached (the gateway's approvals file and the bridge's
 * `trustFiles`, as written, made absolute), with how many bridges hold each: another gateway
 * bridged beside them must not write them either (before, each gateway's files were judged against
 * its own workspaces only, and a second gateway of the app working in the folder of the first's
 * approvals file was bridged: its agent's one approved write added an "always allow" rule there).
 */
const bridgedTrustFiles = new Map<string, number>();

/** `gateway`'s approvals file and `trustFiles`, as written, made absolute (not normalised: `..` is the kernel's at each open). */
function ownTrustFiles(gateway: ProtocolGateway, trustFiles: readonly string[]): string[] {
  const approvals = gateway.approvals.file;
  const files = [...(approvals === undefined ? [] : [approvals]), ...trustFiles].map((file) => (isAbsolute(file) ? file : `${process.cwd()}/${file}`));
  return [...new Set(files)];
}

/**
 * Throws, naming the file, when one of `workspaces` (the real folders `gateway`'s agents write in,
 * agent-workspaces.ts) holds its approvals file or one of `trustFiles` (the grants file…), wherever
 * their links lead, or when a link on the way to one lies in it (the file is read through it at
 * each load: re-pointed, it is the agent's). Beside every other bridged gateway: its workspaces
 * may not hold these files, nor these workspaces its files (holdTrustFiles).
 */
export function refuseTrustFilesInWorkspaces(gateway: ProtocolGateway, workspaces: readonly string[], trustFiles: readonly string[]): void {
  const own = ownTrustFiles(gateway, trustFiles);
  const otherWorkspaces = bridgedWorkspaceFolders().filter((folder) => !workspaces.includes(folder));
  const otherFiles = [...bridgedTrustFiles.keys()].filter((file) => !own.includes(file));
  for (const workspace of workspaces) refuseFilesIn(workspace, own, {});
  for (const workspace of otherWorkspaces) refuseFilesIn(workspace, own, { workspace: OTHERS });
  for (const workspace of workspaces) refuseFilesIn(workspace, otherFiles, { file: ANOTHER_BRIDGES });
}

/** Whose a folder or file named in a refusal is, when it is not the attaching bridge's gateway's or bridge's. */
const OTHERS = " (another bridged gateway's)";
const ANOTHER_BRIDGES = " (another bridge's)";

/**
 * `gateway`'s approvals file and `trustFiles` are held while its bridge is attached: every bridge
 * attached later, whatever its gateway, is refused when its workspaces hold one. Returns the
 * function that lets them go (the bridge detached or its window closed).
 */
export function holdTrustFiles(gateway: ProtocolGateway, trustFiles: readonly string[]): () => void {
  return holdCounted(bridgedTrustFiles, ownTrustFiles(gateway, trustFiles));
}

function refuseFilesIn(workspace: string, files: readonly string[], whose: { workspace?: string; file?: string }): void {
  const ws = `${workspace}${whose.workspace ?? ''}`;
  for (const asWritten of files) {
    const file = `${asWritten}${whose.file ?? ''}`;
    // Where a write of it lands, as the approvals judge a write's landing: links followed, a
    // link to what is not made yet too.
    const real = landing(resolve(asWritten));
    if (real === undefined) {
      // A link loop (past 40 links): a loop through the workspace is one an agent can end there.
      throw new Error(`the app's own file ${file} cannot be followed to where a write of it lands (a loop of links?): it cannot be checked against the agents' workspace ${ws}`);
    }
    const places = placesOnTheWay(asWritten).filter((place) => isInside(place.at, workspace));
    const link = places.find((place) => place.link);
    if (link !== undefined) {
      throw new Error(
        `the way to the app's own file ${file} passes the link ${link.at}, which lies in the agents' workspace ${ws}: one approved 'ln -sfn' there would make the file theirs; name the file by a path with no link in the workspace (or give the agents a workspace that holds no link to the app's files)`,
      );
    }
    if (isInside(real, workspace)) {
      throw new Error(
        `the agents' workspace ${ws} holds the app's own file ${file}${real === resolve(asWritten) ? '' : ` (${real})`}: one approved write of it would grant a plugin or add an "always allow" rule; give the agents a workspace that does not hold the app's files (not the home folder when they are under ~/.config)`,
      );
    }
    // A folder of the workspace left again with `..` (its real parent is outside): one approved
    // `mv sub sub.old && ln -s … sub` changes where the way leads.
    const folder = places[0];
    if (folder !== undefined) {
      throw new Error(
        `the way to the app's own file ${file} passes the folder ${folder.at}, which lies in the agents' workspace ${ws}, and leaves it with '..': one approved 'mv' and 'ln -s' there would make the file theirs; name the file by a path that does not pass the workspace`,
      );
    }
  }
}

/**
 * Each place met on the way to absolute `path` as written (`..` not dropped first): every folder
 * and every link (its own place, not its target), in the order the kernel meets them, targets'
 * parts too. Where the file lands is landing()'s to say; this is what the path goes through: a
 * link is read afresh at every open, and a folder of the workspace followed by `..` is one an
 * agent can swap for a link. Stops at the first part that is not there and after as many links
 * as the kernel follows (landing() says such a path cannot be read).
 */
export function placesOnTheWay(path: string): { at: string; link: boolean }[] {
  const met: { at: string; link: boolean }[] = [];
  let links = 0;
  let parts = path.split('/');
  let at = '/';
  while (parts.length > 0 && links <= MAX_LINKS_FOLLOWED) {
    const part = parts.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      at = dirname(at); // `at` is real (every link before it followed): its parent is the kernel's
      continue;
    }
    const next = join(at, part);
    let target: string;
    try {
      if (!lstatSync(next).isSymbolicLink()) {
        met.push({ at: next, link: false });
        at = next;
        continue;
      }
      target = readlinkSync(next);
    } catch {
      break; // not there: nothing further down is a link
    }
    met.push({ at: next, link: true });
    links += 1;
    if (target.startsWith('/')) at = '/';
    parts = [...target.split('/'), ...parts];
  }
  return met;
}

/** Links followed on one path before the kernel gives up (Linux's MAXSYMLINKS). */
const MAX_LINKS_FOLLOWED = 40;

// The folders a bridged gateway's agents may write in, as the bridge keeps the app's page, preload
// copies, package folder and trust files apart from them (pages-guard.ts, trust-files-guard.ts).
// The gateway knows one: its broker's root workspace. An agent may be given another (a
// LocalRunner's own workspace factory, bundledAgents given another folder's detectWorkspace), and a
// gateway without a root workspace knows none: its bridge could check nothing, and an agent working
// in the pages folder made one approved write of page.js the page that answers every approval. So
// the embedder names the others, and a gateway with no root workspace is bridged only when the
// embedder has said, even as [], where its agents write.
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isInside } from '../broker/spawn-context.js';
import type { ProtocolGateway } from '../gateway/index.js';
import { holdCounted } from './counted-hold.js';
import { bridgedWorkspaceFolders, bridgeWorkspaces } from './pages-guard.js';
import { placesOnTheWay } from './trust-files-guard.js';

/**
 * The folders named for each gateway by any of its bridges, as real paths (undefined: never
 * named). Where a gateway's agents write is the gateway's, not a window's: a folder named when one
 * window was bridged is checked for every later bridge of that gateway and stays registered while
 * any is attached (before, it was forgotten when the window that named it closed, its gateway's
 * other window still bridged, and a pages folder in it was then served unrefused).
 */
const namedFor = new WeakMap<ProtocolGateway, string[]>();

/**
 * The real paths of the folders `gateway`'s agents write in: its broker's root workspace (if any),
 * each of `declared` (the bridge's `agentWorkspaces`), which must exist and be folders, and those
 * an earlier bridge of the gateway was attached with (holdAgentWorkspaces). Throws, saying what to do, when the gateway has no root
 * workspace and no bridge of it has named its folders (`[]` included).
 */
export function agentWorkspacesOf(gateway: ProtocolGateway, declared: readonly string[] | undefined): string[] {
  const root = gateway.broker.workspaceRoot; // a real path already: the broker resolved it once
  const named = namedFor.get(gateway);
  if (root === undefined && declared === undefined && named === undefined) {
    throw new Error(
      "attachDesktopBridge: the gateway has no agents' workspace (broker.root.workspaceRoot), so nothing can check that its agents cannot write the page, the preload or the app's trust files: give the gateway broker: { root: { workspaceRoot } } (the folder its agents work in, as detectWorkspace gives it), or name the folders its agents write in the bridge's agentWorkspaces option ([] when they write no files)",
    );
  }
  const folders = [...(root === undefined ? [] : [root]), ...(named ?? [])];
  for (const folder of declared ?? []) {
    let real: string;
    try {
      real = realpathSync(resolve(folder));
    } catch {
      throw new Error(`attachDesktopBridge: the agents' workspace ${folder} (agentWorkspaces) does not exist (or leads through a link to nowhere): create it before the bridge is attached, so it can be checked`);
    }
    if (!statSync(real).isDirectory()) throw new Error(`attachDesktopBridge: the agents' workspace ${folder} (agentWorkspaces) is not a folder (${real})`);
    if (!folders.includes(real)) folders.push(real);
  }
  // Judged beside every other bridged gateway's folders too: another gateway's agents may write
  // the way to this one's as well as its own (before, two gateways of one app, one's root inside
  // the other's, were each bridged, and the outer's agent's 'mv' and 'ln -s' re-pointed the inner's).
  const others = bridgedWorkspaceFolders().filter((folder) => !folders.includes(folder));
  const judged = [...folders, ...others];
  // The ways folders were named by, this bridge's and those named before (this gateway's, every
  // bridged gateway's), are judged beside every folder now known: a link or a folder left with '..'
  // on a way named earlier may lie in a workspace known only now (before, a folder named through a
  // link was judged against the workspaces known when it was named, and a gateway bridged later
  // whose workspace held the link was accepted: its agent's 'ln -sfn' re-pointed the other's folder).
  const own = (declared ?? []).map(asWritten);
  const earlier = [...(namedWaysFor.get(gateway) ?? []), ...bridgedWays.keys()].filter((way) => !own.includes(way));
  for (const way of own) refuseRelinkable(way, judged, '');
  for (const way of new Set(earlier)) refuseRelinkable(way, judged, NAMED_BEFORE);
  refuseNested(judged, new Set(others));
  for (const way of own) refuseLeftWithDotDot(way, judged, '');
  for (const way of new Set(earlier)) refuseLeftWithDotDot(way, judged, NAMED_BEFORE);
  return folders;
}

/** Says a way was named before (for this gateway or another bridged one), not by this attach. */
const NAMED_BEFORE = ', named before';

/** A folder's path as written, made absolute (not normalised: `..` is the kernel's at each use). */
function asWritten(folder: string): string {
  return isAbsolute(folder) ? folder : `${process.cwd()}/${folder}`;
}

/** The ways (agentWorkspacesOf's asWritten) the folders named for each gateway were named by. */
const namedWaysFor = new WeakMap<ProtocolGateway, string[]>();

/** The ways of the folders named for every gateway with a bridge attached, with how many gateways hold each. */
const bridgedWays = new Map<string, number>();

/** The real path `way` leads to now, or what stops it, for a refusal's advice. */
function realPathNow(way: string): string {
  try {
    return realpathSync(resolve(way));
  } catch {
    return 'where it leads, once it is there';
  }
}

/** `inner` lies in `outer` and is not it. */
function strictlyInside(inner: string, outer: string): boolean {
  return inner !== outer && isInside(inner, outer);
}

/**
 * Throws when one of the agents' workspaces (real paths) lies in another: the outer one's agents
 * may write every folder on the way to the inner one, so one approved `mv sub sub.old && ln -s …
 * sub` re-points the path the inner one's runner is given (resolved again at each task) wherever
 * they like, the pages folder too. A link on the way is refused by refuseRelinkable; a plain
 * folder is the same hole one command later.
 */
function refuseNested(workspaces: readonly string[], elsewhere: ReadonlySet<string>): void {
  const whose = (folder: string): string => (elsewhere.has(folder) ? ` (another bridged gateway's)` : '');
  for (const inner of workspaces) {
    const outer = workspaces.find((other) => strictlyInside(inner, other));
    if (outer === undefined) continue;
    throw new Error(
      `attachDesktopBridge: the agents' workspace ${inner}${whose(inner)} lies in the agents' workspace ${outer}${whose(outer)}: its agents may write every folder on the way to it, and one approved 'mv' and 'ln -s' there would re-point it (a runner follows the path again at each task); give each of the agents' workspaces a folder apart from the others`,
    );
  }
}

/**
 * Throws when the way to `folder` as written passes a folder lying in one of `workspaces` and
 * leaves it again with `..` (`<workspace>/sub/../../elsewhere`): the folder is resolved once, here,
 * while a runner given the same path meets `sub` afresh at each task, and one approved `mv` and
 * `ln -s` there would re-point it (as a trust file's way is judged, trust-files-guard.ts).
 */
function refuseLeftWithDotDot(folder: string, workspaces: readonly string[], when: string): void {
  for (const place of placesOnTheWay(folder)) {
    const within = workspaces.find((workspace) => strictlyInside(place.at, workspace));
    if (within === undefined) continue;
    throw new Error(
      `attachDesktopBridge: the way to the agents' workspace ${folder} (agentWorkspaces${when}) passes the folder ${place.at}, which lies in the agents' workspace ${within}, and leaves it with '..': one approved 'mv' and 'ln -s' there would re-point it; name the folder by its real path (${realPathNow(folder)}), and give your runner that path too`,
    );
  }
}

/**
 * Throws when the way to `folder` as written (a named agents' workspace) passes a link lying in one
 * of `workspaces`: the folder is resolved once, here, but a runner given the same path follows the
 * link at each task, and one approved `ln -sfn` there would point it at the pages folder. (A runner
 * given another path than the one named is not seen: give both the real path.)
 */
function refuseRelinkable(folder: string, workspaces: readonly string[], when: string): void {
  for (const place of placesOnTheWay(folder)) {
    const within = place.link ? workspaces.find((workspace) => isInside(place.at, workspace)) : undefined;
    if (within === undefined) continue;
    throw new Error(
      `attachDesktopBridge: the way to the agents' workspace ${folder} (agentWorkspaces${when}) passes the link ${place.at}, which lies in the agents' workspace ${within}: one approved 'ln -sfn' there would re-point it; name the folder by its real path (${realPathNow(folder)}), and give your runner that path too`,
    );
  }
}

/**
 * What each gateway with a bridge attached holds apart from the pages (pages-guard.ts): how many of
 * its bridges are attached, and the functions that forget the folders registered for it. The
 * folders are the gateway's, so they are registered for the gateway, not for the bridge that named
 * them: a folder a later window named stays kept apart until the gateway's last bridge goes
 * (before, it went with the window that named it while the gateway's first window was still
 * bridged, and a pages folder or a preload copy in it was then accepted).
 */
const heldFor = new WeakMap<ProtocolGateway, { bridges: number; folders: Set<string>; ways: Set<string>; forget: (() => void)[] }>();

/**
 * A bridge of `gateway` is being attached, its agents writing in `folders` (agentWorkspacesOf's;
 * `declared` what it named): the folders not yet held for the gateway are checked against every
 * pages folder served, preload copy folder and this package's folder (it throws, holding nothing
 * new, when one overlaps) and held for the gateway; the named ones are the gateway's from now on
 * (not before the check succeeds: a folder refused, the embedder trying another, is not held
 * against the next attach). Returns the function the bridge calls once it is gone: the gateway's
 * folders are let go with its last bridge.
 */
export function holdAgentWorkspaces(gateway: ProtocolGateway, folders: readonly string[], declared: readonly string[] | undefined): () => void {
  const held = heldFor.get(gateway) ?? { bridges: 0, folders: new Set<string>(), ways: new Set<string>(), forget: [] };
  const fresh = folders.filter((folder) => !held.folders.has(folder));
  held.forget.push(bridgeWorkspaces(fresh)); // throws before anything is held
  for (const folder of fresh) held.folders.add(folder);
  held.bridges += 1;
  heldFor.set(gateway, held);
  if (declared !== undefined) {
    const root = gateway.broker.workspaceRoot;
    namedFor.set(gateway, folders.filter((folder) => folder !== root));
    const known = namedWaysFor.get(gateway) ?? [];
    const ways = declared.map(asWritten).filter((way) => !known.includes(way));
    namedWaysFor.set(gateway, [...known, ...ways]);
  }
  // The ways its folders were named by are held with them: judged at every attach, any gateway's.
  const freshWays = (namedWaysFor.get(gateway) ?? []).filter((way) => !held.ways.has(way));
  held.forget.push(holdCounted(bridgedWays, freshWays));
  for (const way of freshWays) held.ways.add(way);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    held.bridges -= 1;
    if (held.bridges > 0) return;
    for (const forget of held.forget.splice(0)) forget();
    held.folders.clear();
    held.ways.clear();
  };
}

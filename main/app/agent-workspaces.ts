// The folders a bridged gateway's agents may write in, as the bridge keeps the app's page, preload
// copies, package folder and trust files apart from them (pages-guard.ts, trust-files-guard.ts).
// The gateway knows one: its broker's root workspace. An agent may be given another (a
// LocalRunner's own workspace factory, bundledAgents given another folder's detectWorkspace), and a
// gateway without a root workspace knows none: its bridge could check nothing, and an agent working
// in the pages folder made one approved write of page.js the page that answers every approval. So
// the embedder names the others, and a gateway with no root workspace is bridged only when the
// embedder has said, even as [], where its agents write.
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ProtocolGateway } from '../gateway/index.js';

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
 * an earlier bridge of the gateway was attached with (keepAgentWorkspaces). Throws, saying what to do, when the gateway has no root
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
  return folders;
}

/**
 * A bridge of `gateway` was attached with these folders (agentWorkspacesOf's, `declared` what it
 * named): they are the gateway's from now on. Not before the attach succeeds: a folder refused
 * (the embedder trying another) is not held against the next attach.
 */
export function keepAgentWorkspaces(gateway: ProtocolGateway, folders: readonly string[], declared: readonly string[] | undefined): void {
  if (declared === undefined) return;
  const root = gateway.broker.workspaceRoot;
  namedFor.set(gateway, folders.filter((folder) => folder !== root));
}

import type { SpawnContext } from '../fabric/wire/payloads.js';

/** The root's node name, and its role. */
export const ROOT = 'root';

/** What the broker knows about one node (the root, a long-lived participant, a task's worker). */
export interface NodeState {
  name: string;
  /**
   * `participant` for a long-lived participant (`openParticipant`), `worker` for a virtual agent's
   * per-task worker. Only the root, participants and virtual agents are roles: a worker is never
   * called, listed or put on a roster.
   */
  kind: 'root' | 'participant' | 'worker';
  /** Its role: the spec it was admitted under (`lead` for `lead-0`), `root` for the root. */
  role: string;
  /** Roles from the root down to this node, its own included: `["root", "lead", "helper"]`. */
  chain: string[];
  /**
   * The chains of the other tasks a participant above it was running when it made the call that
   * led here (it ran several at once, and its callee's chain is the deepest one's): a role in any
   * of them is a cycle for this node's calls too. Empty for most nodes.
   */
  otherChains: string[][];
  /** Its own spawn context: where it works, whom it may call. */
  spawnContext: SpawnContext;
  /** The roles it may invoke; `undefined` (the root by default) means every published agent. */
  roster: readonly string[] | undefined;
  /**
   * The nodes whose calls led to it, nearest first (its caller, that caller's caller…), the root
   * left out: the way a question climbs. Empty for the root and a participant acting as itself.
   */
  callers: string[];
  /**
   * The tree it belongs to: the id of the root's call it works under (that call's task id), or,
   * for a participant acting as itself and what it starts, the participant's own name.
   */
  tree: string;
}

/**
 * The nodes the broker knows now, by name: each from its admission until it ends (names are never
 * reused, and an ended one is told by the directory that handed it out: see `Broker.ended`).
 */
export class NodeTable {
  private readonly byName = new Map<string, NodeState>();

  add(node: NodeState): void {
    this.byName.set(node.name, node);
  }

  delete(name: string): void {
    this.byName.delete(name);
  }

  get(name: string): NodeState | undefined {
    return this.byName.get(name);
  }
}

/** Whether `a` and `b` are on one tree (the root is on every tree). */
export function sameTree(a: NodeState, b: NodeState): boolean {
  return a.name === ROOT || b.name === ROOT || a.tree === b.tree;
}

import { MAX_DELEGATION_DEPTH } from '../../broker/index.js';
import { MAX_NAME_CHARS, type TaskNode } from './contract.js';

/**
 * Nodes one task's tree holds. The broker bounds a real tree; steps are a worker's words and could
 * name nodes without end, each a node event to the window: past this, no node is drawn, and one
 * note under the root says so.
 */
export const MAX_NODES_PER_TASK = 200;

/**
 * Names one relayed step may carry: the top agent (the root's callee) is at depth 1, so its relays
 * name at most the depths below it that the broker's delegation limit allows.
 */
export const MAX_RELAYED_NAMES = MAX_DELEGATION_DEPTH - 1;

/** The note that ends a full tree: a name with spaces, so never a node's (nor offered as one). */
export const TREE_FULL_NOTE = `further nodes are not drawn: a task's tree holds at most ${MAX_NODES_PER_TASK}`;

/** A task's delegation tree: `nodes` (the task view's own array, in the order added) and a set of their names. */
export class TaskTree {
  private readonly names = new Set<string>();

  constructor(readonly nodes: TaskNode[]) {
    for (const node of nodes) this.names.add(node.name);
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  /**
   * Adds `node` unless a node of its name is there; returns what was added for the window to
   * draw: the node, or once the tree is full the note that says so (then nothing more).
   */
  add(node: TaskNode): TaskNode | undefined {
    // A name longer than the window can name a node is no node's (200 names of 1 MiB each stayed).
    if (node.name.length > MAX_NAME_CHARS || this.names.has(node.name) || this.names.has(TREE_FULL_NOTE)) return undefined;
    const added = this.nodes.length < MAX_NODES_PER_TASK ? node : { name: TREE_FULL_NOTE, role: '', parent: 'root' };
    this.nodes.push(added);
    this.names.add(added.name);
    return added;
  }
}

/** A node's name and the `: ` after it, read where the last one ended (sticky). */
const RELAY_PREFIX = /([A-Za-z0-9._-]+-[0-9]+): /y;
/** The started node's name, read where the prefixes ended, and the end of the step. */
const STARTED = /([A-Za-z0-9._-]+-[0-9]+) started$/y;

/**
 * A relayed start, `<node> started` after relay prefixes (`helper-0: leaf-0 started`), as the
 * names from the top agent's callee down; undefined for any other step, for one naming a chain
 * deeper than MAX_RELAYED_NAMES (no worker could truthfully relay it) and for one with a name
 * longer than MAX_NAME_CHARS (no node's, and the tree would keep it for the task's life). Each
 * name is read from where the last one ended, and at most MAX_RELAYED_NAMES + 1 are read: a step
 * a worker fills with names costs its first few, never its length squared.
 */
export function relayedStart(step: string): string[] | undefined {
  const names: string[] = [];
  let at = 0;
  for (;;) {
    STARTED.lastIndex = at;
    const started = STARTED.exec(step);
    if (started) return names.length < MAX_RELAYED_NAMES && started[1]!.length <= MAX_NAME_CHARS ? [...names, started[1]!] : undefined;
    if (names.length === MAX_RELAYED_NAMES) return undefined;
    RELAY_PREFIX.lastIndex = at;
    const prefix = RELAY_PREFIX.exec(step);
    if (!prefix || prefix[1]!.length > MAX_NAME_CHARS) return undefined;
    names.push(prefix[1]!);
    at = RELAY_PREFIX.lastIndex;
  }
}

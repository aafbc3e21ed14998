import type { NodeState } from './nodes.js';
import { sameTree } from './nodes.js';

/** What one sender may post in its run, in UTF-8 bytes of text. */
export const MAILBOX_ALLOWANCE_BYTES = 8 * 1024;
/** What may wait, undelivered, for one recipient. */
export const MAILBOX_PENDING_BYTES = 64 * 1024;
/**
 * What a post costs at least, against both: a post is a message to route, an id, an entry in a
 * box and a `<sender>: ` prefix whatever its text, so empty mail is never free.
 */
export const MAILBOX_POST_MIN_BYTES = 64;

export type MailboxOutcome =
  | { status: 'pending'; id: string }
  | { status: 'refused'; reason: 'not_on_tree' | 'over_allowance' | 'recipient_ended' };

/** A message to the root, as its `onMessage` listeners get it. */
export interface RootMessage {
  id: string;
  from: string;
  text: string;
}

/**
 * `mailbox.post`: a node leaves a note for the root (delivered at once to its listeners) or for a
 * node on its own tree (delivered in the `messages` of the next `agent.invoke` result that node
 * receives, as `<sender>: <text>`). Each sender has an allowance per run; each recipient holds a
 * bounded amount of undelivered mail; a post counts as its text's UTF-8 bytes, and at least
 * `MAILBOX_POST_MIN_BYTES`.
 */
export class Mailboxes {
  private nextId = 0;
  private readonly sent = new Map<string, number>();
  private readonly pending = new Map<string, { texts: string[]; bytes: number }>();
  private readonly listeners = new Set<(message: RootMessage) => void>();

  /**
   * `node(name)`: a live node as mail sees it (a long-lived participant on the tree of the one task
   * it runs); `ended(name)`: whether `name` is a node that has ended (the broker keeps nothing else of it).
   */
  constructor(
    private readonly node: (name: string) => NodeState | undefined,
    private readonly ended: (name: string) => boolean,
  ) {}

  post(from: NodeState, to: string, text: string): MailboxOutcome {
    const recipient = this.node(to);
    // An ended node is said to have ended whichever tree it was on: its name tells nothing more
    // than the names after it do (`<spec>-<n>`, counted up).
    if (!recipient) return { status: 'refused', reason: this.ended(to) ? 'recipient_ended' : 'not_on_tree' };
    if (!sameTree(from, recipient)) return { status: 'refused', reason: 'not_on_tree' };
    const bytes = Math.max(Buffer.byteLength(text, 'utf8'), MAILBOX_POST_MIN_BYTES);
    const used = this.sent.get(from.name) ?? 0;
    if (from.kind !== 'root' && used + bytes > MAILBOX_ALLOWANCE_BYTES) return { status: 'refused', reason: 'over_allowance' };
    const id = `msg-${++this.nextId}`;
    if (recipient.kind === 'root') {
      this.sent.set(from.name, used + bytes);
      const message: RootMessage = { id, from: from.name, text };
      for (const listener of [...this.listeners]) {
        try {
          listener(message);
        } catch {
          // a listener's failure is the embedder's; the post still succeeded
        }
      }
      return { status: 'pending', id };
    }
    const box = this.pending.get(recipient.name) ?? { texts: [], bytes: 0 };
    if (box.bytes + bytes > MAILBOX_PENDING_BYTES) return { status: 'refused', reason: 'over_allowance' };
    this.sent.set(from.name, used + bytes);
    box.texts.push(`${from.name}: ${text}`);
    box.bytes += bytes;
    this.pending.set(recipient.name, box);
    return { status: 'pending', id };
  }

  /** Takes what waits for `name`, in the order it was posted. */
  drain(name: string): string[] {
    const box = this.pending.get(name);
    this.pending.delete(name);
    return box?.texts ?? [];
  }

  /** A node that ended: its undelivered mail goes, and its allowance (its run is over; its name is never used again). */
  forget(name: string): void {
    this.pending.delete(name);
    this.sent.delete(name);
  }

  onRootMessage(listener: (message: RootMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

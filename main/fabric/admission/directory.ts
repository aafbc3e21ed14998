/** A node the broker has admitted: its name and where it sits. For now every node is the root's. */
export interface AdmittedNode {
  name: string;
  spec: string;
  scope: string;
  owner: string | null;
}

/**
 * Names nodes `<spec>-<n>`, counting from 0 per spec. A name is never handed out twice in the
 * broker's life, not even after its node is gone: a late frame or log line can never be mistaken
 * for a newer node's.
 */
export class Directory {
  private readonly next = new Map<string, number>();

  admit(spec: string): AdmittedNode {
    if (spec.length === 0) throw new Error('fabric: a node needs a non-empty spec');
    const n = this.next.get(spec) ?? 0;
    this.next.set(spec, n + 1);
    return { name: `${spec}-${n}`, spec, scope: 'root', owner: null };
  }

  /** Whether `name` is one this directory has handed out (`<spec>-<n>`, spelt as `admit` spells it). */
  admitted(name: string): boolean {
    const dash = name.lastIndexOf('-');
    const n = name.slice(dash + 1);
    if (dash <= 0 || !/^(0|[1-9][0-9]*)$/.test(n)) return false;
    return Number(n) < (this.next.get(name.slice(0, dash)) ?? 0);
  }
}

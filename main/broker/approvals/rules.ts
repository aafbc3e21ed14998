import { randomBytes } from 'node:crypto';
import { coversLanding, deniedBy, matches, namesEveryTag, type MatchSubject } from './match.js';
import { RulesFile } from './rules-file.js';
import { NewApprovalRule, type ApprovalRule, type DangerTag } from './types.js';

/** A request as the rules see it: what it asks, who asks (by role), under which root task, and what the gateway found in it. */
export interface RuleSubject extends MatchSubject {
  role: string;
  task?: string | undefined;
  hidden: boolean;
  danger: readonly DangerTag[];
  /** A write's landing through links, when it is another path than `path`: an allow rule must cover it too. */
  lands?: string | undefined;
}

/**
 * The remembered decisions. A rule applies to a request of its kind from its agent (a role, or
 * `'*'` for every agent), within its task and its workspace when it has them, whose command or
 * path its match covers.
 * Deny rules win. An allow rule never applies to a request with hidden characters, nor to one
 * carrying a danger tag that its match does not itself name (`rm -rf build` names
 * recursive-delete; `npm test *` names nothing, so `npm test && curl … | sh` is asked).
 * Task rules (and every rule when there is no file) are kept in memory; the others in the file.
 */
export class ApprovalRules {
  private memory: ApprovalRule[] = [];
  private file: RulesFile | undefined;

  constructor(private readonly log: (message: string) => void = () => {}) {}

  /** Keeps "always" rules in `path` from now on; reads it at once, throwing `RulesFileError` (naming it) when it is malformed. */
  persistTo(path: string): void {
    const file = new RulesFile(path);
    file.read();
    this.file = file;
  }

  /** Where "always" rules are kept, when they are kept in a file. */
  get filePath(): string | undefined {
    return this.file?.path;
  }

  /** Every rule: the file's (read again if it changed), then those in memory. Throws when the file has become malformed. */
  list(): ApprovalRule[] {
    return [...(this.file?.read() ?? []), ...this.memory];
  }

  /** Adds a rule (checked), with a fresh id; a rule without `task` goes to the file when there is one. */
  add(input: NewApprovalRule): ApprovalRule {
    const parsed = NewApprovalRule.parse(input);
    const rule: ApprovalRule = { id: this.freshId(), ...parsed };
    if (rule.task !== undefined || !this.file) this.memory.push(rule);
    else this.file.update((rules) => [...rules, rule]);
    return rule;
  }

  /** Removes the rule with this id; false when there is none. */
  remove(id: string): boolean {
    const before = this.memory.length;
    this.memory = this.memory.filter((rule) => rule.id !== id);
    if (this.memory.length !== before) return true;
    if (!this.file?.read().some((rule) => rule.id === id)) return false;
    this.file.update((rules) => rules.filter((rule) => rule.id !== id));
    return true;
  }

  /** The root task `task` has ended: its rules end with it. */
  endTask(task: string): void {
    this.memory = this.memory.filter((rule) => rule.task !== task);
  }

  /**
   * The rule that decides `subject`, if one does: a deny rule first, else an allow rule that may
   * approve it. `ask`: a deny rule may cover it but the gateway cannot read it whole (`$(echo make)
   * deploy` under a deny of `make deploy`): no allow rule applies, and only a person may approve it.
   */
  decide(subject: RuleSubject): { effect: 'allow' | 'deny' | 'ask'; rule: ApprovalRule } | undefined {
    let rules: ApprovalRule[];
    try {
      rules = this.list();
    } catch (err) {
      // An unreadable file decides nothing (neither way): the person is asked.
      this.log(`${(err as Error).message}: no rule applies until it is fixed`);
      rules = this.memory;
    }
    const scoped = rules.filter(
      (rule) =>
        rule.kind === subject.kind &&
        (rule.agent === subject.role || rule.agent === '*') &&
        (rule.task === undefined || rule.task === subject.task) &&
        (rule.workspace === undefined || rule.workspace === subject.workspace),
    );
    // A deny prefix covers the program wherever the line runs it (`cd x && git push`), not only a simple command.
    let unsure: ApprovalRule | undefined;
    for (const rule of scoped) {
      if (rule.effect !== 'deny') continue;
      const covered = deniedBy(rule.match, subject);
      if (covered === 'denied') return { effect: 'deny', rule };
      if (covered === 'maybe') unsure ??= rule;
    }
    if (unsure) return { effect: 'ask', rule: unsure };
    const applicable = scoped.filter((rule) => rule.effect === 'allow' && matches(rule.match, subject) && coversLanding(rule.match, subject));
    if (subject.hidden) return undefined;
    // Where a written path lands was not read: no rule's text can name that, a person is asked.
    if (subject.danger.includes('hidden-characters') || subject.danger.includes('unread-landing')) return undefined;
    const allow = applicable.find((rule) => rule.effect === 'allow' && namesEveryTag(rule.match, subject.kind, subject.workspace, subject.danger));
    return allow ? { effect: 'allow', rule: allow } : undefined;
  }

  private freshId(): string {
    let taken: Set<string>;
    try {
      taken = new Set(this.list().map((rule) => rule.id));
    } catch {
      taken = new Set(this.memory.map((rule) => rule.id));
    }
    for (;;) {
      const id = `rule-${randomBytes(4).toString('hex')}`;
      if (!taken.has(id)) return id;
    }
  }
}

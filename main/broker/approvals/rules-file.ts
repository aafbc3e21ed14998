import { z } from 'zod';
import { OwnerOnlyJsonFile, repeatedValue } from '../../owner-only/index.js';
import { ApprovalRule } from './types.js';

/** The file "always" rules live in: `{ "version": 1, "rules": [...] }`. A task's rules are never written. */
const RulesFileShape = z.strictObject({ version: z.literal(1), rules: z.array(ApprovalRule.omit({ task: true }).strict()) });
type RulesFileShape = z.infer<typeof RulesFileShape>;

/** A rules file that cannot be read as one: it is left as it is, and nothing is written over it. */
export class RulesFileError extends Error {
  override readonly name = 'RulesFileError';
}

/**
 * The "always" rules on disk: an owner-only JSON file (0600), validated on every read, written
 * atomically, refused and never overwritten when malformed (`OwnerOnlyJsonFile`). Read again when
 * another process (`chatty-gateway approvals revoke`) has changed it, so that a revoked rule stays
 * revoked.
 */
export class RulesFile {
  private readonly file: OwnerOnlyJsonFile<RulesFileShape>;

  constructor(readonly path: string) {
    this.file = new OwnerOnlyJsonFile(path, {
      label: 'approvals file',
      contents: 'rules',
      kind: 'a rules file',
      schema: RulesFileShape,
      check: (shape) => repeatedValue(shape.rules.map((rule) => rule.id), 'rule id'), // revoke could not tell them apart
      refuse: (message) => new RulesFileError(message),
    });
  }

  /** The rules in the file (none when it does not exist); throws `RulesFileError` naming the file when it is malformed. */
  read(): ApprovalRule[] {
    return this.file.read()?.rules ?? [];
  }

  /** Reads the file, applies `change` (pure: it may be called again) to its rules and writes the result (refused, the file untouched, when it cannot be read). */
  update(change: (rules: ApprovalRule[]) => ApprovalRule[]): void {
    this.file.update((current) => ({ version: 1, rules: change([...(current?.rules ?? [])]) }));
  }
}

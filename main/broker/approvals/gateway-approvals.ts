import type { ApprovalRules } from './rules.js';
import type { AuditLog } from './audit-log.js';
import type { ApprovalRule, AuditRow, NewApprovalRule } from './types.js';

/** `gateway.approvals`: the remembered rules, and every decision as it is made. */
export interface GatewayApprovals {
  /** Every rule: the file's "always" rules (read again when it changed), then the rules in memory (task rules). */
  list(): ApprovalRule[];
  /** Adds a rule and returns it with its id; a rule without `task` is written to the file when there is one. */
  add(rule: NewApprovalRule): ApprovalRule;
  /** Revokes a rule; false when no rule has this id. */
  remove(id: string): boolean;
  /** Each decision's audit row as it is made; returns the unsubscribe function. */
  onDecision(listener: (row: AuditRow) => void): () => void;
  /** The file "always" rules are kept in, if any. */
  readonly file: string | undefined;
}

export function gatewayApprovals(rules: ApprovalRules, audit: AuditLog): GatewayApprovals {
  return {
    list: () => rules.list(),
    add: (rule) => rules.add(rule),
    remove: (id) => rules.remove(id),
    onDecision: (listener) => audit.subscribe(listener),
    get file() {
      return rules.filePath;
    },
  };
}

import { ApprovalRules, defaultApprovalsFile, describeMatch, type ApprovalRule } from '../../broker/index.js';
import { failure } from '../failure.js';
import { shownOneLine } from '../terminal-root/index.js';

export interface ApprovalsFileOptions {
  /** `--approvals-file PATH` (default: `defaultApprovalsFile()`, as `serve`'s). */
  file?: string | undefined;
}

/** The "always" rules of a file; a malformed file is reported (naming it) and left as it is. */
function rulesIn(file: string): ApprovalRules {
  const rules = new ApprovalRules();
  rules.persistTo(file);
  return rules;
}

/**
 * One rule as a line: `rule-1a2b3c4d  allow exec  coder   npm test *`. Its fields are shown on one
 * line by the display rule, so that a file edited by hand can neither hide a character nor add a line of its own.
 */
function ruleLine(rule: ApprovalRule): string {
  return `${shownOneLine(rule.id)}  ${rule.effect.padEnd(5)} ${rule.kind.padEnd(5)} ${shownOneLine(rule.agent).padEnd(16)} ${shownOneLine(describeMatch(rule.match))}`;
}

/** `chatty-gateway approvals list [--approvals-file PATH] [--json]`: the remembered "always" rules. */
export function runApprovalsList(options: ApprovalsFileOptions & { json: boolean }): number {
  const file = options.file ?? defaultApprovalsFile();
  try {
    const list = rulesIn(file).list();
    if (options.json) process.stdout.write(`${JSON.stringify({ file, rules: list })}\n`);
    else if (list.length === 0) process.stdout.write(`no approval rules in ${file}\n`);
    else process.stdout.write(`${list.map(ruleLine).join('\n')}\n`);
    return 0;
  } catch (err) {
    return failure(err);
  }
}

/** `chatty-gateway approvals revoke ID`: removes one rule from the file (a running `serve` sees it at its next approval). */
export function runApprovalsRevoke(id: string, options: ApprovalsFileOptions): number {
  const file = options.file ?? defaultApprovalsFile();
  try {
    if (!rulesIn(file).remove(id)) return failure(new Error(`no approval rule ${JSON.stringify(id)} in ${file} (see: chatty-gateway approvals list)`));
    process.stdout.write(`revoked ${id}\n`);
    return 0;
  } catch (err) {
    return failure(err);
  }
}

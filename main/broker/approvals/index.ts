/**
 * Approvals policy: what the gateway vouches for about a request (its task, workspace, resolved
 * path, danger tags), the rules a person remembered (deny wins; never for hidden characters or a
 * danger their match does not name), where "always" rules are kept, and the audit log.
 */
export { DANGER_TAGS, ApprovalMatch, ApprovalRule, DangerTag, NewApprovalRule, type AuditRow, type DecidedBy, type ModeDecidedBy } from './types.js';
export { dangerReading, dangerTags } from './danger.js';
export { coversLanding, denies, describeMatch, globMatches, matches, namesEveryTag, proposals, type MatchSubject } from './match.js';
export { pathTags, placePath, type PlacedPath } from './sensitive-paths.js';
export { isSimpleCommand, simpleCommands, type SimpleCommand } from './shell-commands.js';
export { readShellText, type ShellText } from './shell-text.js';
export { ApprovalRules, type RuleSubject } from './rules.js';
export { RulesFile, RulesFileError } from './rules-file.js';
export { APPROVALS_LOG_FILE, AuditLog } from './audit-log.js';
export { ConfigPlaces } from './gateway-config.js';
export { vouchedContext, type VouchedContext } from './request-context.js';
export { defaultApprovalsFile } from './default-file.js';
export { MAX_APPROVAL_TEXT_CHARS, oversized } from './text-limit.js';
export { hasLoneSurrogate } from './lone-surrogate.js';
export { gatewayApprovals, type GatewayApprovals } from './gateway-approvals.js';

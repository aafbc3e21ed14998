/** The broker: routes work between the root, long-lived participants and virtual agents. */
export { Broker, CANCEL_GRACE_MS, type AgentCard, type BrokerOptions, type RootInvokeResult } from './broker.js';
export {
  MAX_PENDING_APPROVALS,
  MAX_PENDING_QUESTIONS,
  type ApprovalDecision,
  type ApprovalHandler,
  type ApprovalRequest,
  type Asker,
  type Clarification,
  type ModeDecision,
  type QuestionHandler,
  type QuestionToRoot,
  type Verdict,
} from './human-loop.js';
export { RootCallError, RootTransport, type RootInvokeOptions } from './root-transport.js';
export { MAX_DELEGATION_DEPTH } from './delegation.js';
export { MAX_TASK_TEXT_BYTES } from './task-text.js';
export { MAX_WORKERS, MAX_WORKERS_PER_TASK } from './worker-slots.js';
export { MAILBOX_ALLOWANCE_BYTES, MAILBOX_PENDING_BYTES, MAILBOX_POST_MIN_BYTES, type MailboxOutcome, type RootMessage } from './mailbox.js';
export { calleeSpawnContext, checkSpawnContext, deriveSpawnContext, type AgentSettings } from './spawn-context.js';
export type { Runner, RunnerStart, StartedWorker, Workspace, WorkspaceFactory } from './runners/runner.js';
export { QUESTION_LIMITS, checkQuestionRequest, checkRelayedAnswers } from './question-limits.js';
export {
  APPROVALS_LOG_FILE,
  DANGER_TAGS,
  ApprovalRules,
  AuditLog,
  RulesFileError,
  dangerTags,
  defaultApprovalsFile,
  describeMatch,
  gatewayApprovals,
  type ApprovalMatch,
  type ApprovalRule,
  type AuditRow,
  type DangerTag,
  type DecidedBy,
  type GatewayApprovals,
  type ModeDecidedBy,
  type NewApprovalRule,
} from './approvals/index.js';

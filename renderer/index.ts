/**
 * `chatty-protocol-gateway/renderer`: what a page needs to be the root's human, as browser ES
 * modules with no Node imports. The `window.chatty` API's types (types only: nothing of main runs
 * here), the display rule every text a worker controls goes through, and the approval and question
 * popover as a custom element:
 *
 *     import { defineChattyApprovals } from 'chatty-protocol-gateway/renderer';
 *     defineChattyApprovals();               // defines <chatty-approvals>; importing defines nothing
 *     document.body.append(document.createElement('chatty-approvals')); // uses window.chatty
 */
export type {
  AgentSummary,
  AnswerApproval,
  AnswerGrant,
  AnswerQuestion,
  ApprovalMatch,
  ApprovalRule,
  Asker,
  AuditRow,
  CapabilityAsk,
  CancelTask,
  ChattyBridge,
  DangerTag,
  EdgeRow,
  GatewayInfo,
  MailEntry,
  MailOutcome,
  ModuleChangeView,
  ModuleList,
  ModuleSummary,
  PendingApproval,
  PendingGrant,
  PendingModuleView,
  PendingQuestion,
  PostMessage,
  Refused,
  RevokeApprovalRule,
  Snapshot,
  StartTask,
  TaskNode,
  TaskState,
  TaskUpdate,
  TaskView,
  TimelineEntry,
  Withdrawn,
} from '../main/app/bridge/contract.js';
export { hasHidden, showExactly, shownParts, type ShownPart, type ShownText } from '../main/display/index.js';
export { CAPABILITY_LABEL, ChattyApprovals, DANGER_LABEL, defineChattyApprovals, GUARD_MS, type Waiting } from './approvals/index.js';
export { localClock } from './approvals/parts.js';

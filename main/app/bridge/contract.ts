import { z } from 'zod';
import type { ApprovalMatch as BrokerApprovalMatch, ApprovalRule, AuditRow, DangerTag } from '../../broker/approvals/index.js';
import type { ApprovalRequest } from '../../broker/index.js';
import type { CapabilityAsk } from '../../plugins/grants/index.js';
import type { EdgeRow } from '../../gateway/edge/edge-log.js';
import type { PendingModule as GatewayPendingModule } from '../../gateway/modules.js';

/**
 * The renderer bridge: every channel between the main process and the (untrusted) renderer, with
 * the schema of what crosses it. The preload imports these names as types only (a sandboxed
 * preload can require nothing but 'electron') and its own copy must equal them, which the
 * compiler checks (`satisfies`); the browser tests check it again at run time.
 */

/** renderer → main (`ipcRenderer.invoke`): each takes the payload its schema below says. */
export const INVOKE_CHANNELS = {
  /** Where the gateway is (socket and token file paths, never the token). */
  gatewayInfo: 'chatty:gateway-info',
  /** The agents the root may call. */
  listAgents: 'chatty:list-agents',
  /** The loaded plugin modules with their tools. */
  listModules: 'chatty:list-modules',
  /** What a (re)loaded window needs: tasks, waiting requests, the mailbox, recent edge rows. */
  snapshot: 'chatty:snapshot',
  /** Starts a task on an agent: `{agent, prompt}` → `{taskId}`. */
  startTask: 'chatty:start-task',
  /** Cancels a running task and everything under it: `{taskId}`. */
  cancelTask: 'chatty:cancel-task',
  /** `{requestId, verdict}` for a waiting approval. */
  answerApproval: 'chatty:answer-approval',
  /** `{requestId, answers}` for a waiting question. */
  answerQuestion: 'chatty:answer-question',
  /** `{requestId, decision}` for a plugin's waiting capability request: `granted` or `denied`. */
  answerGrant: 'chatty:answer-grant',
  /** The root leaves a note for a node: `{to, text}`. */
  postMessage: 'chatty:post-message',
  /** The remembered approval rules (`gateway.approvals.list()`). */
  listApprovalRules: 'chatty:list-approval-rules',
  /** Revokes one remembered rule: `{id}` → `{revoked}`. */
  revokeApprovalRule: 'chatty:revoke-approval-rule',
} as const;

/** main → renderer (`webContents.send`): one payload each, as typed below. */
export const EVENT_CHANNELS = {
  /** One edge-log row. */
  edgeRow: 'chatty:edge-row',
  /** A task started, changed or ended (`TaskUpdate`). */
  task: 'chatty:task',
  /** An approval waits for the human (`PendingApproval`). */
  approval: 'chatty:approval',
  /** A question waits for the human (`PendingQuestion`). */
  question: 'chatty:question',
  /** A plugin's capability request waits for the human (`PendingGrant`). */
  grant: 'chatty:grant',
  /** A waiting request was withdrawn by its asker: the popover closes (`Withdrawn`). */
  withdrawn: 'chatty:withdrawn',
  /** A mailbox entry: a note a node left for the root, or one the root posted (`MailEntry`). */
  message: 'chatty:message',
  /** One approval decision, as the audit log records it (`AuditRow`). */
  approvalDecision: 'chatty:approval-decision',
  /** The plugin list changed: a module came online, was reloaded or unloaded, or one not served is building, failed or waits for a grant (`ModuleList`). */
  modules: 'chatty:modules',
  /** This page is answered no more until it loads again (its preload copy was changed by someone else): why, and what to do (`Refused`). */
  refused: 'chatty:refused',
} as const;

export const BRIDGE_CHANNELS = { ...INVOKE_CHANNELS, ...EVENT_CHANNELS } as const;

export type InvokeChannels = typeof INVOKE_CHANNELS;
export type EventChannels = typeof EVENT_CHANNELS;
export type InvokeChannel = InvokeChannels[keyof InvokeChannels];
export type EventChannel = EventChannels[keyof EventChannels];

// ---------------------------------------------------------------------------------------------
// What the renderer sends: validated in main before anything else happens.

const MAX_PROMPT_CHARS = 64 * 1024;
const MAX_ANSWER_CHARS = 16 * 1024;
const MAX_POST_CHARS = 8 * 1024;
/**
 * The longest agent or node name the window may send (an agent to start, a node to post to). The
 * broker's names have no bound of their own; a task's tree draws no longer name (task-tree.ts).
 */
export const MAX_NAME_CHARS = 200;
const name = z.string().min(1).max(MAX_NAME_CHARS);
const requestId = z.string().regex(/^(approval|question)-[1-9][0-9]{0,9}$/);
const taskId = z.string().regex(/^task-[1-9][0-9]{0,9}$/);

export const StartTaskSchema = z.strictObject({ agent: name, prompt: z.string().min(1).max(MAX_PROMPT_CHARS) });
export const CancelTaskSchema = z.strictObject({ taskId });
const MAX_MATCH_CHARS = 8 * 1024;
/** What a remembered rule matches (the broker's `ApprovalMatch`, capped): the exact command or path, a command's leading words, a path glob. */
export const ApprovalMatchSchema = z.union([
  z.strictObject({ exact: z.string().min(1).max(MAX_MATCH_CHARS) }),
  z.strictObject({ prefix: z.string().min(1).max(MAX_MATCH_CHARS) }),
  z.strictObject({ glob: z.string().min(1).max(MAX_MATCH_CHARS) }),
]) satisfies z.ZodType<BrokerApprovalMatch>;
/**
 * An approval's answer: a verdict, and for an approval the person chose to remember, for how
 * long (`task`: until the root task ends; `always`: in the rules file) and what it matches (one
 * of the request's `proposals`, checked in main; none means the exact command or path).
 */
export const AnswerApprovalSchema = z
  .strictObject({
    requestId,
    verdict: z.enum(['approved', 'denied']),
    remember: z.enum(['task', 'always']).optional(),
    match: ApprovalMatchSchema.optional(),
  })
  .refine((a) => a.remember === undefined || a.verdict === 'approved', { message: 'only an approval is remembered' })
  .refine((a) => a.match === undefined || a.remember !== undefined, { message: 'a match goes with remember' });
export const RevokeApprovalRuleSchema = z.strictObject({ id: z.string().min(1).max(200) });
export const AnswerQuestionSchema = z.strictObject({
  requestId,
  answers: z
    .array(z.strictObject({ id: z.string().min(1).max(200), answer: z.string().max(MAX_ANSWER_CHARS), custom: z.boolean() }))
    .min(1)
    .max(64),
});
export const PostMessageSchema = z.strictObject({ to: name, text: z.string().min(1).max(MAX_POST_CHARS) });
/** A plugin's capability request answered: granted (remembered for its digest) or denied (it is not served). */
export const AnswerGrantSchema = z.strictObject({ requestId: z.string().regex(/^grant-[1-9][0-9]{0,9}$/), decision: z.enum(['granted', 'denied']) });

/** What each invoke channel takes from the renderer. */
export const InvokeRequestSchemas = {
  [INVOKE_CHANNELS.gatewayInfo]: z.undefined(),
  [INVOKE_CHANNELS.listAgents]: z.undefined(),
  [INVOKE_CHANNELS.listModules]: z.undefined(),
  [INVOKE_CHANNELS.snapshot]: z.undefined(),
  [INVOKE_CHANNELS.startTask]: StartTaskSchema,
  [INVOKE_CHANNELS.cancelTask]: CancelTaskSchema,
  [INVOKE_CHANNELS.answerApproval]: AnswerApprovalSchema,
  [INVOKE_CHANNELS.answerQuestion]: AnswerQuestionSchema,
  [INVOKE_CHANNELS.answerGrant]: AnswerGrantSchema,
  [INVOKE_CHANNELS.postMessage]: PostMessageSchema,
  [INVOKE_CHANNELS.listApprovalRules]: z.undefined(),
  [INVOKE_CHANNELS.revokeApprovalRule]: RevokeApprovalRuleSchema,
} as const satisfies Record<InvokeChannel, z.ZodType>;

export type StartTask = z.infer<typeof StartTaskSchema>;
export type CancelTask = z.infer<typeof CancelTaskSchema>;
export type AnswerApproval = z.infer<typeof AnswerApprovalSchema>;
export type AnswerQuestion = z.infer<typeof AnswerQuestionSchema>;
export type AnswerGrant = z.infer<typeof AnswerGrantSchema>;
export type PostMessage = z.infer<typeof PostMessageSchema>;
export type RevokeApprovalRule = z.infer<typeof RevokeApprovalRuleSchema>;
export type ApprovalMatch = z.infer<typeof ApprovalMatchSchema>;

/** The limits of an answer the page checks before sending (main checks them again). */
export const ANSWER_LIMITS = { answerChars: MAX_ANSWER_CHARS, questions: 64, idChars: 200 } as const;

// ---------------------------------------------------------------------------------------------
// What main sends or answers. Built in main from trusted data; typed here for both sides.

export interface GatewayInfo {
  socketPath: string;
  tokenPath: string;
  /** The runtime directory (`--runtime-dir` for `chatty-gateway mcp-stdio`). */
  runtimeDir: string;
}

export interface AgentSummary {
  name: string;
  displayName: string;
  description: string;
  skills: { name: string; description: string; examples: string[] }[];
}

/** A served plugin module with its tools (`registry.list()` and each one's `listTools()`). */
export const ModuleSummarySchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  surfaces: z.array(z.string()),
  tools: z.array(z.strictObject({ name: z.string(), description: z.string() })),
  /** Why its tools could not be listed, when they could not. */
  toolsError: z.string().optional(),
});
export type ModuleSummary = z.infer<typeof ModuleSummarySchema>;

/** A module announced but not served (`registry.pending()`): being built, whose build failed, or whose capabilities are not granted; `reason` says why, in the gateway's words. */
export const PendingModuleViewSchema = z.strictObject({
  name: z.string(),
  state: z.enum(['building', 'failed', 'ungranted']),
  reason: z.string().optional(),
});
export type PendingModuleView = z.infer<typeof PendingModuleViewSchema>;
// The states are the gateway's, all of them: a new one fails the build here until it is added above.
const pendingStatesAreTheGateways: [PendingModuleView['state']] extends [GatewayPendingModule['state']]
  ? [GatewayPendingModule['state']] extends [PendingModuleView['state']]
    ? true
    : false
  : false = true;
void pendingStatesAreTheGateways;

/** What happened to a module (the registry's `ModuleChange`). */
export const ModuleChangeViewSchema = z.strictObject({ name: z.string(), change: z.enum(['served', 'reloaded', 'unloaded', 'pending']) });
export type ModuleChangeView = z.infer<typeof ModuleChangeViewSchema>;

/**
 * The plugin list after one or more changes (`chatty:modules`): the whole list, served and not,
 * as it is once `changes` (oldest first) have happened, so the page replaces what it shows. Checked
 * against this schema in main before it is sent.
 */
export const ModuleListSchema = z.strictObject({
  changes: z.array(ModuleChangeViewSchema).min(1),
  modules: z.array(ModuleSummarySchema),
  pending: z.array(PendingModuleViewSchema),
});
export type ModuleList = z.infer<typeof ModuleListSchema>;

/** One edge-log row, as the gateway records it (a type only: nothing of the gateway reaches the renderer). */
export type { EdgeRow };

export interface Asker {
  /** The admitted node that asks (`helper-0`). */
  agent: string;
  /** Roles from the root down to it (`["root", "lead", "helper"]`). */
  chain: string[];
}

/**
 * A node of a task's delegation tree; `parent` is `root` for the agent the root called. A full tree
 * (`MAX_NODES_PER_TASK`, main/app/bridge/task-tree.ts) ends with one node under `root` whose name
 * (with spaces, never a node's) says that further nodes are not drawn.
 */
export interface TaskNode {
  name: string;
  role: string;
  parent: string;
}

export type TaskState = 'running' | 'completed' | 'failed' | 'cancelled';

export interface TimelineEntry {
  /** Milliseconds since the epoch. */
  at: number;
  kind: 'admitted' | 'step' | 'text' | 'approval' | 'question' | 'verdict' | 'answer' | 'withdrawn' | 'result';
  text: string;
  /** The node it concerns, when known. */
  node?: string;
}

export interface TaskView {
  taskId: string;
  agent: string;
  prompt: string;
  startedAt: number;
  state: TaskState;
  nodes: TaskNode[];
  entries: TimelineEntry[];
  /** The task's error (a refusal, a failure), once ended. */
  error?: string;
}

export type TaskUpdate =
  | { type: 'started'; task: TaskView }
  | { type: 'entry'; taskId: string; entry: TimelineEntry }
  | { type: 'node'; taskId: string; node: TaskNode }
  | { type: 'ended'; taskId: string; state: Exclude<TaskState, 'running'>; error?: string };

/** The danger tags, remembered rules and audit rows are the broker's own types (types only: nothing of the broker reaches the renderer). */
export type { ApprovalRule, AuditRow, DangerTag };

/**
 * A waiting approval as the page sees it: the broker's `ApprovalRequest` (its vouched fields as the
 * broker writes them), with the worker's words in camelCase, the root task as `rootTask`, and the
 * bridge's own id, task and time.
 */
export interface PendingApproval extends Omit<ApprovalRequest, 'command_or_path' | 'diff_stat' | 'task' | 'asker'> {
  requestId: string;
  /** The task it belongs to, when the bridge could tell. */
  taskId: string | null;
  /** The worker's words: shown through the display rule. */
  commandOrPath: string;
  /** The worker's words about its change (`+1 -0`), not a field the gateway checked. */
  diffStat?: string;
  asker: Asker;
  at: number;
  /** The root task it belongs to, from the broker's records. */
  rootTask?: string;
}

export interface PendingQuestion {
  requestId: string;
  taskId: string | null;
  questions: { id: string; question: string; options: string[] }[];
  asker: Asker;
  origin?: string;
  at: number;
}

/**
 * A plugin's waiting capability request (the grant desk's `PluginGrantRequest`) as the page sees
 * it: the plugin, its version, the component's digest and what it asks for, one ask each; the
 * plugin author's words, shown through the display rule. `requestId` is the bridge's own.
 */
export interface PendingGrant {
  requestId: string;
  plugin: string;
  version: string;
  /** `sha256:<64 hex>` of the plugin's `plugin.wasm`: the grant is for this build only. */
  digest: string;
  /** The digest as a line shows it: `sha256:ab12cd34ef56…` (the grants' own `shortDigest`). */
  digestShort: string;
  asks: PendingAsk[];
  /** The plugin's folder, when the desk knows it: what `./data` is relative to. */
  dir?: string | undefined;
  at: number;
}

/** One ask as the page shows it: its detail (the plugin's words) and what it reaches, in the gateway's words (`askReach`: `''` when the detail says it all). */
export interface PendingAsk extends CapabilityAsk {
  reach: string;
}

export type { CapabilityAsk };

export interface Withdrawn {
  requestId: string;
  reason: string;
}

/** The page's calls are refused from now on, until the window loads again: why, and what the person can do. */
export interface Refused {
  reason: string;
}

export type MailEntry =
  | { id: string; direction: 'in'; from: string; text: string; at: number }
  | { id: string; direction: 'out'; to: string; text: string; at: number; outcome: MailOutcome };

export type MailOutcome = { status: 'pending'; id: string } | { status: 'refused'; reason: 'not_on_tree' | 'over_allowance' | 'recipient_ended' };

export interface Snapshot {
  tasks: TaskView[];
  approvals: PendingApproval[];
  questions: PendingQuestion[];
  /** The plugins' capability requests waiting, oldest first. */
  grants: PendingGrant[];
  /** Plugin modules announced but not served (the served ones are `listModules()`), by name. */
  pendingModules: PendingModuleView[];
  mailbox: MailEntry[];
  edgeRows: EdgeRow[];
  /** The newest approval decisions (at most 200), oldest first. */
  auditRows: AuditRow[];
}

/** What each invoke channel answers. */
export interface InvokeResponses {
  [INVOKE_CHANNELS.gatewayInfo]: GatewayInfo;
  [INVOKE_CHANNELS.listAgents]: AgentSummary[];
  [INVOKE_CHANNELS.listModules]: ModuleSummary[];
  [INVOKE_CHANNELS.snapshot]: Snapshot;
  [INVOKE_CHANNELS.startTask]: { taskId: string };
  [INVOKE_CHANNELS.cancelTask]: { cancelled: true };
  [INVOKE_CHANNELS.answerApproval]: { accepted: true };
  [INVOKE_CHANNELS.answerQuestion]: { accepted: true };
  [INVOKE_CHANNELS.answerGrant]: { accepted: true };
  [INVOKE_CHANNELS.postMessage]: MailOutcome;
  [INVOKE_CHANNELS.listApprovalRules]: ApprovalRule[];
  [INVOKE_CHANNELS.revokeApprovalRule]: { revoked: boolean };
}

/** What each event channel carries. */
export interface EventPayloads {
  [EVENT_CHANNELS.edgeRow]: EdgeRow;
  [EVENT_CHANNELS.task]: TaskUpdate;
  [EVENT_CHANNELS.approval]: PendingApproval;
  [EVENT_CHANNELS.question]: PendingQuestion;
  [EVENT_CHANNELS.grant]: PendingGrant;
  [EVENT_CHANNELS.withdrawn]: Withdrawn;
  [EVENT_CHANNELS.message]: MailEntry;
  [EVENT_CHANNELS.approvalDecision]: AuditRow;
  [EVENT_CHANNELS.modules]: ModuleList;
  [EVENT_CHANNELS.refused]: Refused;
}

type Unsubscribe = () => void;

/** The API the preload exposes as `window.chatty`: functions, and subscriptions returning their unsubscribe function. */
export interface ChattyBridge {
  gatewayInfo(): Promise<GatewayInfo>;
  listAgents(): Promise<AgentSummary[]>;
  listModules(): Promise<ModuleSummary[]>;
  snapshot(): Promise<Snapshot>;
  startTask(request: StartTask): Promise<{ taskId: string }>;
  cancelTask(request: CancelTask): Promise<{ cancelled: true }>;
  answerApproval(request: AnswerApproval): Promise<{ accepted: true }>;
  answerQuestion(request: AnswerQuestion): Promise<{ accepted: true }>;
  answerGrant(request: AnswerGrant): Promise<{ accepted: true }>;
  postMessage(request: PostMessage): Promise<MailOutcome>;
  listApprovalRules(): Promise<ApprovalRule[]>;
  revokeApprovalRule(request: RevokeApprovalRule): Promise<{ revoked: boolean }>;
  onEdgeRow(listener: (row: EdgeRow) => void): Unsubscribe;
  onTask(listener: (update: TaskUpdate) => void): Unsubscribe;
  onApproval(listener: (request: PendingApproval) => void): Unsubscribe;
  onQuestion(listener: (request: PendingQuestion) => void): Unsubscribe;
  onGrant(listener: (request: PendingGrant) => void): Unsubscribe;
  onWithdrawn(listener: (withdrawn: Withdrawn) => void): Unsubscribe;
  onMessage(listener: (entry: MailEntry) => void): Unsubscribe;
  onApprovalDecision(listener: (row: AuditRow) => void): Unsubscribe;
  onModules(listener: (list: ModuleList) => void): Unsubscribe;
  /** This page is refused from now on (its preload copy was changed), with nothing of its own waiting to withdraw: the reason, once a document. */
  onRefused(listener: (refused: Refused) => void): Unsubscribe;
}

/** The keys of `window.chatty`, for the run-time check that the preload exposes exactly these. */
export const CHATTY_API_KEYS = [
  'answerApproval',
  'answerGrant',
  'answerQuestion',
  'cancelTask',
  'gatewayInfo',
  'listAgents',
  'listApprovalRules',
  'listModules',
  'onApproval',
  'onApprovalDecision',
  'onEdgeRow',
  'onGrant',
  'onMessage',
  'onModules',
  'onQuestion',
  'onRefused',
  'onTask',
  'onWithdrawn',
  'postMessage',
  'revokeApprovalRule',
  'snapshot',
  'startTask',
] as const satisfies readonly (keyof ChattyBridge)[];

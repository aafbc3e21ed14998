import { z } from 'zod';
import { CancelParams, notification, request } from './envelope.js';
import { Answer, Asker, Identity, Budget, QuestionRequest, RequestId, Skill, SpawnContext, TaskMetadata } from './payloads.js';

/** Everything a broker may send. A worker decodes only this; anything else closes the connection. */

export const TaskRunParams = z.strictObject({
  taskId: z.string(),
  text: z.string(),
  identity: Identity.optional(),
  spawnContext: SpawnContext.optional(),
  captureConversation: z.boolean().optional(),
  budget: Budget.optional(),
});

export const RelayedAskParams = z.strictObject({
  question: z.string(),
  request: z.strictObject({ questions: QuestionRequest.shape.questions, asker: Asker }),
});

export const ProgressEvent = z.union([
  z.strictObject({ Admitted: z.string() }),
  z.strictObject({ Step: z.string() }),
  z.strictObject({ Text: z.string() }),
]);

export const ProgressParams = z.strictObject({ id: RequestId, event: ProgressEvent });

export const BrokerMessage = z.discriminatedUnion('method', [
  request('task.run', TaskRunParams),
  request('human.ask', RelayedAskParams),
  notification('req.progress', ProgressParams),
  notification('req.cancel', CancelParams),
]);

export const HelloResult = z.strictObject({ name: z.string(), scope: z.string(), owner: z.string().nullable() });

export const InvokeResult = z.strictObject({
  success: z.boolean(),
  response: z.string(),
  error: z.string().optional(),
  metadata: TaskMetadata.optional(),
  messages: z.array(z.string()).default([]),
  cancelled_by_user: z.boolean().default(false),
});

export const AgentInfo = z.strictObject({
  name: z.string(),
  displayName: z.string(),
  description: z.string(),
  version: z.string(),
  skills: z.array(Skill),
  capabilities: z.strictObject({ streaming: z.boolean() }),
  origin: z.string(),
});

export const MailboxResult = z.discriminatedUnion('status', [
  z.strictObject({ status: z.literal('pending'), id: z.string() }),
  z.strictObject({ status: z.literal('refused'), reason: z.enum(['not_on_tree', 'over_allowance', 'recipient_ended']) }),
]);

/** What a broker's result carries, by the method of the worker's request it answers. */
export const BrokerResults = {
  'session.hello': HelloResult,
  'agent.invoke': InvokeResult,
  'agent.list': z.array(AgentInfo),
  'mailbox.post': MailboxResult,
  'human.approve': z.enum(['approved', 'denied']),
  'human.ask': z.array(Answer),
} as const;

export type BrokerMessage = z.infer<typeof BrokerMessage>;
export type BrokerRequest = Extract<BrokerMessage, { id: number }>;
export type BrokerNotification = Exclude<BrokerMessage, { id: number }>;
export type TaskRunParams = z.infer<typeof TaskRunParams>;
export type ProgressEvent = z.infer<typeof ProgressEvent>;
export type HelloResult = z.infer<typeof HelloResult>;
export type InvokeResult = z.infer<typeof InvokeResult>;
export type AgentInfo = z.infer<typeof AgentInfo>;
export type MailboxResult = z.infer<typeof MailboxResult>;
export type BrokerResultOf<M extends keyof typeof BrokerResults> = z.infer<(typeof BrokerResults)[M]>;

import { z } from 'zod';
import { CancelParams, bareRequest, notification, request } from './envelope.js';
import { Answer, Asker, ParticipantCard, ProgressTaskState, QuestionRequest, RequestId, SpawnContext, TaskOutcome } from './payloads.js';

/** Everything a worker may send. A broker decodes only this; anything else closes the connection. */

export const HelloParams = z.strictObject({ card: ParticipantCard, schema: z.string().optional() });

export const TaskEventParams = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('status'), id: RequestId, state: ProgressTaskState, message: z.string().optional() }),
  z.strictObject({ kind: z.literal('artifact'), id: RequestId, text: z.string(), lastChunk: z.boolean().default(false) }),
]);

export const InvokeParams = z.strictObject({
  agent: z.string(),
  prompt: z.string(),
  handle: z.string().nullable().default(null),
  include_trace: z.boolean().default(false),
  spawn_context: SpawnContext.optional(),
});

export const MailboxParams = z.strictObject({ to: z.string(), text: z.string() });

export const ApproveParams = z.strictObject({
  kind: z.enum(['exec', 'write']),
  command_or_path: z.string(),
  diff_stat: z.string().optional(),
  asker: Asker.optional(),
});

export const WorkerMessage = z.discriminatedUnion('method', [
  request('session.hello', HelloParams),
  request('agent.invoke', InvokeParams),
  bareRequest('agent.list'),
  request('mailbox.post', MailboxParams),
  request('human.approve', ApproveParams),
  request('human.ask', QuestionRequest),
  notification('task.event', TaskEventParams),
  notification('req.cancel', CancelParams),
]);

/** What a worker's result carries, by the method of the broker's request it answers. */
export const WorkerResults = {
  'task.run': TaskOutcome,
  'human.ask': z.union([z.literal('escalate'), z.strictObject({ answers: z.array(Answer) })]),
} as const;

export type WorkerMessage = z.infer<typeof WorkerMessage>;
export type WorkerRequest = Extract<WorkerMessage, { id: number }>;
export type WorkerNotification = Exclude<WorkerMessage, { id: number }>;
export type WorkerCall = Exclude<WorkerRequest, { method: 'session.hello' }>;
export type HelloParams = z.infer<typeof HelloParams>;
export type TaskEventParams = z.infer<typeof TaskEventParams>;
export type InvokeParams = z.infer<typeof InvokeParams>;
export type ApproveParams = z.infer<typeof ApproveParams>;
export type WorkerResultOf<M extends keyof typeof WorkerResults> = z.infer<(typeof WorkerResults)[M]>;

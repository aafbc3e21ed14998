import { z } from 'zod';
import { OpaqueJson } from './raw-json.js';

/**
 * The payload types both directions share. Every object is strict: an unknown field anywhere is a
 * decode error. Field case follows the original wire (camelCase task fields, snake_case card,
 * spawn context and agent.invoke fields).
 */

/** A request id: a non-negative integer each side numbers from 1. */
export const RequestId = z.number().int().nonnegative();

export const TaskState = z.enum(['submitted', 'working', 'input-required', 'completed', 'failed', 'canceled']);
export const TerminalTaskState = z.enum(['completed', 'failed', 'canceled']);
/** A `task.event` status is never terminal (that is the result) and never `input-required` (that is a `human.ask`). */
export const ProgressTaskState = z.enum(['submitted', 'working']);

export const Skill = z.strictObject({ name: z.string(), description: z.string(), examples: z.array(z.string()) });

export const ParticipantCard = z.strictObject({
  name: z.string(),
  display_name: z.string().optional(),
  description: z.string(),
  version: z.string(),
  skills: z.array(Skill),
});

export const SpawnContext = z.strictObject({
  workspace_root: z.string().optional(),
  base_branch: z.string().optional(),
  roster: z.array(z.string()).default([]),
  verification: z.string().optional(),
  endpoint: z.string().optional(),
});

export const Identity = z.strictObject({ tenant: z.string(), user: z.string() });

/** The notes name `budget` without a shape; ours is the two limits a runner can enforce (docs/fabric.md). */
export const Budget = z.strictObject({
  maxTokens: z.number().int().nonnegative().optional(),
  maxSeconds: z.number().nonnegative().optional(),
});

export const Usage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  lines: z.array(z.string()),
});

export const HandoffInvalid = z.strictObject({ role: z.string(), errors: z.array(z.string()) });

/** A task's terminal metadata; `conversation`, `handoff` and `evidence` stay raw JSON text. */
export const TaskMetadata = z.strictObject({
  usage: Usage.optional(),
  trace: z.string().optional(),
  conversation: OpaqueJson.optional(),
  conversationTooLarge: z.number().int().nonnegative().optional(),
  handoff: OpaqueJson.optional(),
  handoffInvalid: HandoffInvalid.optional(),
  evidence: OpaqueJson.optional(),
  /** In an `agent.invoke` result: the bytes the broker cut from the middle of `response` (its cap on a task's text). */
  responseCutBytes: z.number().int().nonnegative().optional(),
});

export const TaskOutcome = z.strictObject({
  state: TerminalTaskState,
  message: z.string().optional(),
  metadata: TaskMetadata.optional(),
});

export const Asker = z.strictObject({ agent: z.string(), chain: z.array(z.string()) });

export const Question = z.strictObject({ id: z.string(), question: z.string(), options: z.array(z.string()).default([]) });

export const QuestionRequest = z.strictObject({
  questions: z.array(Question),
  asker: Asker.optional(),
  origin: z.string().optional(),
});

export const Answer = z.strictObject({ id: z.string(), answer: z.string(), custom: z.boolean().default(false) });

export type TaskState = z.infer<typeof TaskState>;
export type ParticipantCard = z.infer<typeof ParticipantCard>;
export type SpawnContext = z.infer<typeof SpawnContext>;
export type TaskMetadata = z.infer<typeof TaskMetadata>;
export type TaskOutcome = z.infer<typeof TaskOutcome>;
export type QuestionRequest = z.infer<typeof QuestionRequest>;
export type Answer = z.infer<typeof Answer>;

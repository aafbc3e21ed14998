import type { z } from 'zod';
import type { BrokerResultOf, RelayedAskParams } from '../fabric/wire/broker-to-worker.js';
import type { Answer as AnswerSchema, ParticipantCard, Question, SpawnContext } from '../fabric/wire/payloads.js';

/**
 * The wire's payloads as a worker writes and reads them, named for the library's users. What a
 * worker sends is the schema's input (a field with a default may be left out, as on the wire); what
 * it receives is the schema's output (defaults filled in).
 */

/** `agent.invoke`'s result: `{success, response, error?, metadata?, messages, cancelled_by_user}`. */
export type InvokeResult = BrokerResultOf<'agent.invoke'>;
/** One role of `agent.list`'s result. */
export type AgentInfo = BrokerResultOf<'agent.list'>[number];
/** `mailbox.post`'s result: `{status: 'pending', id}` or `{status: 'refused', reason}`. */
export type MailboxResult = BrokerResultOf<'mailbox.post'>;
/** `human.approve`'s result. */
export type Verdict = BrokerResultOf<'human.approve'>;
/** A question as asked (`options` may be left out: none). */
export type QuestionInput = z.input<typeof Question>;
/** An answer as received (`custom` filled in). */
export type Answer = z.output<typeof AnswerSchema>;
/** An answer as given (`custom` may be left out: false). */
export type AnswerInput = z.input<typeof AnswerSchema>;
/** A question relayed to this worker from one of its callees: `{question, request: {questions, asker}}`. */
export type RelayedQuestion = z.output<typeof RelayedAskParams>;
/** A spawn context as requested (`roster` may be left out). */
export type SpawnContextInput = z.input<typeof SpawnContext>;
export type Card = z.input<typeof ParticipantCard>;

export type { ProgressEvent, HelloResult, TaskRunParams } from '../fabric/wire/broker-to-worker.js';
export type { TaskMetadata, TaskOutcome } from '../fabric/wire/payloads.js';
export type { WireError } from '../fabric/wire/wire-error.js';

import { CallError } from '../fabric/admission/index.js';
import type { AgentInfo, ProgressEvent } from '../fabric/wire/broker-to-worker.js';
import type { SpawnContext } from '../fabric/wire/payloads.js';
import type { WireError } from '../fabric/wire/wire-error.js';
import type { Broker, RootInvokeResult } from './broker.js';
import type { ApprovalHandler, QuestionHandler } from './human-loop.js';
import type { MailboxOutcome, RootMessage } from './mailbox.js';
import { checkRelayedAnswers } from './question-limits.js';

/** A refusal of the root's call: its message is the wire error's, `error` the error itself. */
export class RootCallError extends Error {
  override readonly name = 'RootCallError';
  constructor(readonly error: WireError) {
    super(error.message);
  }
}

export interface RootInvokeOptions {
  /** The events a worker's `req.progress` carries: `{Admitted}`, `{Step}`, `{Text}`, in order. */
  onProgress?: (event: ProgressEvent) => void;
  /** Aborting cancels the whole tree under the call; the call then resolves with `cancelled_by_user: true`. */
  signal?: AbortSignal;
  spawnContext?: SpawnContext;
}

/**
 * The root's end of the broker, in process: no socket, the same rules as a worker's calls. The
 * desktop app and a headless embedder both hold one (`ProtocolGateway.transport()`).
 */
export class RootTransport {
  constructor(private readonly broker: Broker) {}

  /** Every role: participants and virtual agents. */
  async listAgents(): Promise<AgentInfo[]> {
    return this.broker.listAgents();
  }

  /** Runs a task on `agent`; rejects with `RootCallError` when the call is refused (unknown agent, spawn context, delegation). */
  async invoke(agent: string, prompt: string, options: RootInvokeOptions = {}): Promise<RootInvokeResult> {
    try {
      return await this.broker.invokeFromRoot(agent, prompt, options);
    } catch (err) {
      if (err instanceof CallError) throw new RootCallError(err.error);
      throw err;
    }
  }

  /** Leaves a note for a node (delivered with its next `agent.invoke` result). */
  async post(to: string, text: string): Promise<MailboxOutcome> {
    return this.broker.postFromRoot(to, text);
  }

  /**
   * Answers every `human.approve` from any depth: `handler(request, signal)` returns (or resolves
   * to) `"approved"` or `"denied"`; `signal` aborts when the worker withdraws it; a handler that
   * throws denies. One at a time: setting another replaces it. Returns the unsubscribe function.
   */
  onApproval(handler: ApprovalHandler): () => void {
    return this.broker.human.onApproval(handler);
  }

  /**
   * Answers questions that climbed to the root: `handler(request, signal)` returns (or resolves to)
   * `[{id, answer, custom?}]`; a handler that throws fails the asker with its message. Without a
   * handler, a root call whose worker asks fails with the question quoted (`metadata.clarification`).
   * The answers are held to what a worker's relayed answers are (`checkRelayedAnswers`: ids asked,
   * once each, 16 K characters and 64 KiB on the wire each, 256 KiB together): what waits for an
   * asker that stopped reading is bytes, and the desktop's answer channel counts characters (16 K
   * control characters are 96 KiB escaped). Others fail the asker (`the root's answer was refused: …`).
   */
  onQuestion(handler: QuestionHandler): () => void {
    return this.broker.human.onQuestion(async (request, signal) => {
      const answers = await handler(request, signal);
      if (!Array.isArray(answers)) return answers; // the broker refuses it, naming what it is
      const wrong = checkRelayedAnswers(request.questions, answers.map((a) => ({ id: String(a.id), answer: String(a.answer), custom: a.custom === true })));
      if (wrong !== undefined) throw new Error(`the root's answer was refused: ${wrong}`);
      return answers;
    });
  }

  /** Notes the nodes leave for the root, as they are posted; returns the unsubscribe function. */
  onMessage(listener: (message: RootMessage) => void): () => void {
    return this.broker.onRootMessage(listener);
  }
}

import type { TaskOutcome } from '../fabric/wire/payloads.js';
import type { TaskEvents } from './serve-one-task.js';

/** Longest tool-call description (`calling <name> <args as JSON>`) before it is cut with `…`. */
export const TOOL_CALL_DESCRIPTION_CHARS = 200;

export interface TaskMapperOptions {
  /** The status message of a tool call (default `describeToolCall`). */
  describeToolCall?: (name: string, args: unknown) => string;
}

/** `calling <name>`, plus its arguments as JSON when there are any, cut at `TOOL_CALL_DESCRIPTION_CHARS`. */
export function describeToolCall(name: string, args?: unknown): string {
  let text = `calling ${name}`;
  if (args !== undefined) {
    let json: string | undefined;
    try {
      json = JSON.stringify(args);
    } catch {
      json = '(arguments not shown)';
    }
    if (json !== undefined) text += ` ${json}`;
  }
  return text.length > TOOL_CALL_DESCRIPTION_CHARS ? `${text.slice(0, TOOL_CALL_DESCRIPTION_CHARS - 1)}…` : text;
}

/**
 * Turns one task's agent-session events into its `task.event` frames and its outcome:
 *
 * - `step(message)` → a `working` status with the message; `toolCall(name, args?)` → the same, with
 *   the call described (`calling read_file {"path":"a.ts"}`).
 * - `textDelta(text)` → one artifact chunk per delta, in order, never merged or split. The latest
 *   delta is held back until the next event, so that the task's last chunk can say
 *   `lastChunk: true`: the next delta or step sends it with `lastChunk: false`, `done`/`failed`/
 *   `canceled` with `lastChunk: true`. An empty delta sends nothing.
 * - `done(finalText?)` → `{state: 'completed'}`, after the held text and `finalText` (text not yet
 *   streamed, e.g. the whole answer of a session that does not stream) as the last chunk;
 *   `failed(error)` → `{state: 'failed', message}`; `canceled(message?)` → `{state: 'canceled'}`.
 *   Return the outcome from a `serveOneTask` runner. The first of these decides: later ones send
 *   nothing and return that same outcome; steps and deltas after it are ignored.
 */
export class TaskMapper {
  private held: string | undefined;
  private outcome: TaskOutcome | undefined;
  private readonly describe: (name: string, args: unknown) => string;

  constructor(
    private readonly events: TaskEvents,
    options: TaskMapperOptions = {},
  ) {
    this.describe = options.describeToolCall ?? describeToolCall;
  }

  /** True once done, failed or canceled has been called. */
  get ended(): boolean {
    return this.outcome !== undefined;
  }

  step(message: string): void {
    if (this.ended) return;
    this.flush(false);
    this.events.status('working', message);
  }

  toolCall(name: string, args?: unknown): void {
    this.step(this.describe(name, args));
  }

  textDelta(text: string): void {
    if (this.ended || text === '') return;
    this.flush(false);
    this.held = text;
  }

  done(finalText?: string): TaskOutcome {
    if (finalText !== undefined) this.textDelta(finalText);
    return this.end({ state: 'completed' });
  }

  failed(error: unknown): TaskOutcome {
    const message = error instanceof Error ? error.message : String(error);
    return this.end({ state: 'failed', message });
  }

  canceled(message?: string): TaskOutcome {
    return this.end(message === undefined ? { state: 'canceled' } : { state: 'canceled', message });
  }

  private end(outcome: TaskOutcome): TaskOutcome {
    if (this.outcome) return this.outcome;
    this.flush(true);
    this.outcome = outcome;
    return outcome;
  }

  private flush(lastChunk: boolean): void {
    if (this.held === undefined) return;
    const text = this.held;
    this.held = undefined;
    this.events.artifact(text, lastChunk);
  }
}

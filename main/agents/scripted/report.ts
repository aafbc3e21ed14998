import type { TaskEvents } from '../../worker/serve-one-task.js';
import type { TaskOutcome } from '../../worker/wire-types.js';

/**
 * A scripted task's events, sent as they happen: each step a `working` status, each piece of text
 * an artifact chunk at once (a command's output is seen while it runs, never held back waiting for
 * the next piece). The end sends an empty chunk with `lastChunk: true` when any text was sent, then
 * the outcome is returned; the first end decides, and nothing is sent after it.
 */
export class ScriptReport {
  private sentText = false;
  private outcome: TaskOutcome | undefined;

  constructor(private readonly events: TaskEvents) {}

  step(message: string): void {
    if (!this.outcome) this.events.status('working', message);
  }

  text(text: string): void {
    if (this.outcome || text === '') return;
    this.events.artifact(text, false);
    this.sentText = true;
  }

  /** `text` as a line: a new line added when it has none. */
  line(text: string): void {
    this.text(text.endsWith('\n') ? text : `${text}\n`);
  }

  end(outcome: TaskOutcome): TaskOutcome {
    if (this.outcome) return this.outcome;
    if (this.sentText) this.events.artifact('', true);
    this.outcome = outcome;
    return outcome;
  }
}

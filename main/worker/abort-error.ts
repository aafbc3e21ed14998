/**
 * What a call withdrawn through its `AbortSignal` rejects with: an `Error` named `AbortError`
 * (code `ABORT_ERR`, as Node's own), whose `cause` is the signal's reason.
 */
export class AbortError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'ABORT_ERR';
  constructor(message: string, signal: AbortSignal) {
    super(message, { cause: signal.reason });
  }
}

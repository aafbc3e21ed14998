/**
 * Why a plugin call failed outside the guest's own `result` (a `tool-error` is a value, not one of
 * these). MCP maps `output_too_large` to 502, `credit_refused` to JSON-RPC -32000 with the reason,
 * `busy` to 503 with `Retry-After: 1`, and everything else to 500.
 */
export type PluginCallErrorKind =
  /** The guest's output was over the 1 MiB cap; it was never lifted into the host. */
  | 'output_too_large'
  /** The call ran past its wall-clock limit; the instance was terminated and replaced. */
  | 'timeout'
  /** The guest trapped (unreachable, out of bounds, memory refused…); the instance was replaced. */
  | 'trap'
  /** The embedder's meter refused the call; the guest was never touched. */
  | 'credit_refused'
  /** The module was unloaded (or the registry closed) before the call finished. */
  | 'unloaded'
  /** The worker thread died or could not start a fresh instance. */
  | 'crashed'
  /** The guest's output did not lift (a bad discriminant, invalid UTF-8 framing…). */
  | 'invalid_output'
  /** The caller cancelled the call (its `signal` aborted); a running guest was stopped and will be replaced. */
  | 'cancelled'
  /**
   * The module already holds `MAX_WAITING_CALLS` calls waiting for its engine: this call was refused
   * at once, never queued, and the waiting ones lose nothing. Message:
   * `busy: module NAME has N calls waiting; try again later`.
   */
  | 'busy';

export class PluginCallError extends Error {
  override readonly name = 'PluginCallError';
  constructor(
    readonly kind: PluginCallErrorKind,
    message: string,
    readonly module?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A module that could not be loaded; `scanDirectory` reports its message as the reason. */
export class PluginLoadError extends Error {
  override readonly name = 'PluginLoadError';
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

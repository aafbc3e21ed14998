import { PluginCallError } from '../errors.js';

/**
 * A call failed (`crashed`) because the module's engine could not start and is not tried again
 * for `retryAfterMs` yet: the start ran out of its instantiation time (see `START_RETRY_FIRST_MS`).
 * The gateway answers it as a 503 with `Retry-After`, the client being able to come back.
 */
export class StartWaitError extends PluginCallError {
  /** `why`: how the start failed (the last one, or the starts that added up to the limit). */
  constructor(
    module: string,
    why: string,
    readonly retryAfterMs: number,
  ) {
    super('crashed', `module '${module}' could not start: ${why}; it is tried again in ${(retryAfterMs / 1000).toFixed(1)} s`, module);
  }
}

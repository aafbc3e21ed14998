import { PluginCallError } from '../errors.js';

/**
 * A call failed (`crashed`) because the module's engine could not start and is not tried again
 * for `retryAfterMs` yet: the start ran out of its instantiation time (see `START_RETRY_FIRST_MS`).
 * The gateway answers it as a 503 with `Retry-After`, the client being able to come back.
 */
export class StartWaitError extends PluginCallError {
  constructor(
    module: string,
    message: string,
    readonly retryAfterMs: number,
  ) {
    super('crashed', message, module);
  }
}

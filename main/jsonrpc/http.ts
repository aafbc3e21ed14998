import type { Dispatcher } from './dispatcher.js';
import type { TransportFrame } from './frame.js';

export interface DispatchOnceOptions {
  /** Abort when the HTTP client goes away; handlers see it as `context.signal`. */
  readonly signal?: AbortSignal;
  /** Who is asking (an SSE session, a protocol session id); handlers see it as `context.peer`. */
  readonly peer?: string;
}

/**
 * The stateless request/response adapter: one HTTP body's frame in, the frame to answer with
 * out. `undefined` means nothing is owed (notifications or responses only): answer 202 with an
 * empty body. Responses inside the body are dropped, since a stateless endpoint has no pending
 * calls of its own. A notification's handler is started, not awaited.
 */
export function dispatchOnce(dispatcher: Dispatcher, frame: TransportFrame, options: DispatchOnceOptions = {}): Promise<TransportFrame | undefined> {
  // These two only (never an `onResponse`): an absent one is undefined, as the dispatcher reads it.
  return dispatcher.dispatch(frame, { signal: options.signal, peer: options.peer });
}

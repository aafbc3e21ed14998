import type { AbortLike } from './call-abort.js';

/**
 * `work`, or the signal's reason (as it is: an `AbortSignal`'s default is an `AbortError`) as soon
 * as `signal` aborts, whichever comes first. The work itself runs on, unheeded: its late value or
 * error is dropped (never an unhandled rejection). The abort listener goes once either settles.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortLike): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {}); // given up on before it started: its error has no one to go to
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const abandon = (): void => reject(signal.reason);
    signal.addEventListener('abort', abandon, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', abandon);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abandon);
        reject(err);
      },
    );
  });
}

import type { WireError } from '../wire/wire-error.js';

/** Throw one from a `CallHandler` to answer the call with that error. */
export class CallError extends Error {
  constructor(readonly error: WireError) {
    super(error.message);
  }
}

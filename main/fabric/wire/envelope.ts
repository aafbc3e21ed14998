import { z } from 'zod';
import { RequestId } from './payloads.js';
import { WireError } from './wire-error.js';

/**
 * The four frame shapes of wire v3. Each method is its own strict object, so `params` beside a
 * notification's `id`, or `{}` on a method that takes none, fails to decode.
 */

const V = z.literal(3);

export const request = <M extends string, P extends z.ZodType>(method: M, params: P) =>
  z.strictObject({ v: V, id: RequestId, method: z.literal(method), params });

export const bareRequest = <M extends string>(method: M) => z.strictObject({ v: V, id: RequestId, method: z.literal(method) });

export const notification = <M extends string, P extends z.ZodType>(method: M, params: P) =>
  z.strictObject({ v: V, method: z.literal(method), params });

/** A result frame before its payload is known: which schema applies depends on the request it answers. */
export const ResultEnvelope = z.strictObject({ v: V, id: RequestId, result: z.unknown() });

export const ErrorFrame = z.strictObject({ v: V, id: RequestId, error: WireError });

export const CancelParams = z.strictObject({ id: RequestId });

export type ErrorFrame = z.infer<typeof ErrorFrame>;
/** A result frame whose payload has been decoded for the request it answers. */
export interface ResultFrame<R = unknown> {
  v: 3;
  id: number;
  result: R;
}

import { z } from 'zod';
import { util } from 'zod/v4/core';

/**
 * JSON-RPC 2.0 envelopes, written once as zod schemas; the TypeScript types are inferred.
 *
 * Objects are strict (an unknown top-level member makes an envelope invalid), so that a value
 * carrying both `result` and `error`, or both `method` and `result`, never decodes as a message.
 * A request id is a string or a number: JSON-RPC discourages `null` ids and MCP and ACP forbid
 * them, so a call with `"id": null` is an Invalid Request here.
 */

export const JSONRPC_VERSION = '2.0';

export const RequestIdSchema = z.union([z.string(), z.number()]);
export type RequestId = z.infer<typeof RequestIdSchema>;

export type Params = Record<string, unknown> | unknown[];

/**
 * By-name or by-position parameters; anything else is an Invalid Request. Checked without looking
 * inside: a `z.record` walked and copied every key (in each branch of the message union), ~3–5×
 * JSON.parse, so one wide `params` with an extra envelope key stalled every client. It accepts
 * what that record-or-array union accepted (zod's own plain-object test) and gives the same value,
 * the object itself unless it has an own `__proto__` key, which the record dropped (and so here).
 */
export const ParamsSchema = z
  .custom<Params>((value) => Array.isArray(value) || util.isPlainObject(value), { message: 'params must be an object or an array' })
  .transform((params) => (Array.isArray(params) || !Object.hasOwn(params, '__proto__') ? params : withoutProtoKey(params)));

/** A copy without the own `__proto__` key (defined as data, never set as the prototype), keys in order. */
function withoutProtoKey(params: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(params)) if (key !== '__proto__') copy[key] = params[key];
  return copy;
}

export const RequestSchema = z.strictObject({
  jsonrpc: z.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  method: z.string(),
  params: ParamsSchema.optional(),
});
export type Request = z.infer<typeof RequestSchema>;

export const NotificationSchema = z.strictObject({
  jsonrpc: z.literal(JSONRPC_VERSION),
  method: z.string(),
  params: ParamsSchema.optional(),
});
export type Notification = z.infer<typeof NotificationSchema>;

export const ErrorObjectSchema = z.strictObject({
  code: z.int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

export const SuccessResponseSchema = z.strictObject({
  jsonrpc: z.literal(JSONRPC_VERSION),
  id: RequestIdSchema,
  result: z.unknown(),
});
export type SuccessResponse = z.infer<typeof SuccessResponseSchema>;

/** `id` is null only when the request's id could not be read (parse error, Invalid Request). */
export const ErrorResponseSchema = z.strictObject({
  jsonrpc: z.literal(JSONRPC_VERSION),
  id: RequestIdSchema.nullable(),
  error: ErrorObjectSchema,
});
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;

export const ResponseSchema = z.union([SuccessResponseSchema, ErrorResponseSchema]);
export type Response = z.infer<typeof ResponseSchema>;

export const MessageSchema = z.union([RequestSchema, NotificationSchema, ResponseSchema]);
/** One well-formed JSON-RPC message: a request, a notification or a response. */
export type Message = z.infer<typeof MessageSchema>;

export function isRequest(message: Message): message is Request {
  return 'method' in message && 'id' in message;
}

export function isNotification(message: Message): message is Notification {
  return 'method' in message && !('id' in message);
}

export function isResponse(message: Message): message is Response {
  return !('method' in message);
}

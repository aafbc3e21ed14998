import { z } from 'zod';

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

/** By-name or by-position parameters; anything else is an Invalid Request. */
export const ParamsSchema = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);
export type Params = z.infer<typeof ParamsSchema>;

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

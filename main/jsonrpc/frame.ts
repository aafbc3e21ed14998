import { nestsTooDeep } from '../fabric/codec/key-count.js';
import { MAX_NESTING_DEPTH } from '../fabric/wire/sizes.js';
import { arrayLongerThan } from './batch-length.js';
import { isJsonObject, keyCount } from './json-object.js';
import { quickMessage } from './quick-message.js';
import { topLevelMembers } from './top-members.js';
import { ErrorObjectSchema, ErrorResponseSchema, MessageSchema, NotificationSchema, RequestSchema, SuccessResponseSchema, type Message } from './wire.js';

/**
 * What crosses between a transport and the protocol layer: one message, one structurally
 * non-empty batch, or a malformed wire value kept intact for a relay.
 *
 * The parser only decides envelope validity. Whether a malformed value deserves an answer
 * (Invalid Request, Parse error, or nothing for a response-shaped value) is the protocol
 * layer's decision, made in `classify.ts`.
 */
export type TransportFrame = MessageFrame | BatchFrame | MalformedFrame;

export interface MessageFrame {
  readonly kind: 'message';
  readonly message: Message;
}

/** A batch keeps its boundary and source order; entries that are not messages keep their JSON value. */
export interface BatchFrame {
  readonly kind: 'batch';
  readonly entries: readonly [BatchEntry, ...BatchEntry[]];
}

export type BatchEntry =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'malformed'; readonly value: unknown };

/**
 * Input that is not a message and not a non-empty array. `text` is the exact input, so a relay
 * forwards it unchanged. `reason: 'parse'` means it was not JSON at all; `'shape'` means it
 * was JSON (`value`) but not a JSON-RPC message, including the empty array; `'batch-too-long'`
 * means an array of more than `MAX_BATCH_ENTRIES` entries, none of which was looked at (`entries`:
 * those counted; a text's count stops at `MAX_BATCH_ENTRIES + 1`, before `JSON.parse`);
 * `'too-deep'` means text nesting more than `MAX_NESTING_DEPTH` levels, never parsed, of which only
 * the top-level envelope members are read (`top`: nested values `null`; `undefined` when it is no object).
 */
export type MalformedFrame =
  | { readonly kind: 'malformed'; readonly reason: 'parse'; readonly text: string }
  | { readonly kind: 'malformed'; readonly reason: 'shape'; readonly text: string; readonly value: unknown }
  | { readonly kind: 'malformed'; readonly reason: 'batch-too-long'; readonly text: string; readonly entries: number }
  | { readonly kind: 'malformed'; readonly reason: 'too-deep'; readonly text: string; readonly top: Record<string, unknown> | undefined };

/**
 * Entries one batch may hold, every entry counted, valid or not (A2A's `MAX_BATCH_ITEMS` is the
 * same 100). Why: each entry costs a decode and an answer on the caller's thread, so an array of
 * hundreds of thousands of cheap invalid entries stalled the gateway's main thread for seconds.
 * Past it the batch is refused whole (`BATCH_TOO_LONG_MESSAGE`, -32600 under id null).
 */
export const MAX_BATCH_ENTRIES = 100;

export const BATCH_TOO_LONG_MESSAGE = `Invalid Request: a batch of more than ${MAX_BATCH_ENTRIES} entries`;

/**
 * Text nesting more than `MAX_NESTING_DEPTH` (1,000) levels, the worker wire's cap, counted by the
 * frame codec's own count (an empty `[]` or `{}` opens none), is refused before `JSON.parse`,
 * which builds every level: a 10 MiB body of `[` cost the gateway's main thread ~5.5 s. Answered
 * -32600 with this message, under the id among its top-level members when there is one.
 */
export const TOO_DEEP_MESSAGE = `Invalid Request: nested too deeply (more than ${MAX_NESTING_DEPTH} levels)`;

export function messageFrame(message: Message): MessageFrame {
  return { kind: 'message', message };
}

export function batchFrame(messages: readonly [Message, ...Message[]]): BatchFrame {
  const [first, ...rest] = messages;
  return { kind: 'batch', entries: [messageEntry(first), ...rest.map(messageEntry)] };
}

/** Returns one frame for every input string; never throws. */
export function parseFrame(text: string): TransportFrame {
  // Free for a text of at most 1,000 characters (the common call), one pass over a longer one.
  if (nestsTooDeep(text)) return { kind: 'malformed', reason: 'too-deep', text, top: topLevelMembers(text) };
  // Before JSON.parse builds its entries (a 10 MiB batch of `{}`: ~2 s); read up to the entry past the cap only.
  if (arrayLongerThan(text, MAX_BATCH_ENTRIES)) return { kind: 'malformed', reason: 'batch-too-long', text, entries: MAX_BATCH_ENTRIES + 1 };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'malformed', reason: 'parse', text };
  }
  return frameFromJson(value, text);
}

/**
 * The same decision for a value that is already parsed (an HTTP body parser's output, say).
 * `text` is what a relay would forward for a malformed value; it defaults to the value re-encoded.
 */
export function frameFromJson(value: unknown, text?: string): TransportFrame {
  if (Array.isArray(value)) {
    if (value.length > MAX_BATCH_ENTRIES) return { kind: 'malformed', reason: 'batch-too-long', text: text ?? reencoded(value), entries: value.length };
    const entries: BatchEntry[] = value.map(entryFromJson);
    if (isNonEmpty(entries)) return { kind: 'batch', entries };
  } else {
    const message = messageOf(value);
    if (message) return { kind: 'message', message };
  }
  return { kind: 'malformed', reason: 'shape', text: text ?? reencoded(value), value };
}

function reencoded(value: unknown): string {
  // JSON.stringify gives undefined (despite its type) for undefined, e.g. an empty parsed body.
  return (JSON.stringify(value) as string | undefined) ?? '';
}

/**
 * The wire text of a frame. A malformed frame is its exact original text; a batch is re-encoded
 * from its entries, which may normalise whitespace but keeps order.
 */
export function serializeFrame(frame: TransportFrame): string {
  switch (frame.kind) {
    case 'message':
      return JSON.stringify(frame.message);
    case 'batch':
      return JSON.stringify(frame.entries.map((e) => (e.kind === 'message' ? e.message : e.value)));
    case 'malformed':
      return frame.text;
  }
}

/** Narrows a list to the non-empty tuple a batch requires. */
export function isNonEmpty<T>(items: T[]): items is [T, ...T[]] {
  return items.length > 0;
}

function messageEntry(message: Message): BatchEntry {
  return { kind: 'message', message };
}

function entryFromJson(value: unknown): BatchEntry {
  const message = messageOf(value);
  return message ? messageEntry(message) : { kind: 'malformed', value };
}

/**
 * The message a value is: the quick check's, else what zod makes of a value the quick check left
 * to it. A value without the envelope every message has (an object with `"jsonrpc": "2.0"` and a
 * `method`, `result` or `error`) is none, decided here: zod's failure path builds issues for each
 * branch of the union, ~30–60 µs a value.
 */
function messageOf(value: unknown): Message | undefined {
  const quick = quickMessage(value);
  if (quick) return quick;
  if (!hasEnvelope(value)) return undefined;
  const parsed = MessageSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The most members a message has (4: `jsonrpc`, `id`, `method`, `params`) and an error object has
 * (3: `code`, `message`, `data`), read from the strict schemas of wire.ts so the two cannot drift.
 */
const MAX_MESSAGE_MEMBERS = Math.max(
  ...[RequestSchema, NotificationSchema, SuccessResponseSchema, ErrorResponseSchema].map((schema) => Object.keys(schema.shape).length),
);
const MAX_ERROR_MEMBERS = Object.keys(ErrorObjectSchema.shape).length;

/**
 * What every branch of `MessageSchema` requires at least (parsed JSON has no undefined values),
 * and no more members than a message (or its error object) has: zod's strict objects list each
 * unknown member in every branch of the union (a body of one object with 700,000 members: ~2.4×
 * JSON.parse; 700,000 members in the `error` of a three-member response: ~1.4×).
 */
function hasEnvelope(value: unknown): boolean {
  if (!isJsonObject(value) || value['jsonrpc'] !== '2.0') return false;
  if (value['method'] === undefined && value['result'] === undefined && value['error'] === undefined) return false;
  if (keyCount(value) > MAX_MESSAGE_MEMBERS) return false;
  const error = value['error'];
  return !isJsonObject(error) || keyCount(error) <= MAX_ERROR_MEMBERS;
}

import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { Direction } from '../wire/direction.js';
import type { ErrorFrame, ResultFrame } from '../wire/envelope.js';
import { OPAQUE_METADATA_KEYS, RawJson } from '../wire/raw-json.js';
import { scanJson } from './json-scan.js';
import { HAS_METADATA, TOO_DEEP, countParsedKeys, countTextKeys } from './key-count.js';
import { MAX_NESTING_DEPTH } from '../wire/sizes.js';

/**
 * One line of text to one frame of a direction, and one frame back to text. Stateless: what is in
 * flight is the codec's business and reaches here only as `resultMethod` (a result's payload
 * schema depends on the request it answers).
 */

export type TextDecoded<M> =
  | { type: 'message'; frame: M }
  | { type: 'result'; frame: ResultFrame; method: string }
  | { type: 'error'; frame: ErrorFrame }
  | { type: 'orphan'; id: number }
  | { type: 'invalid'; reason: string };

const OPAQUE_KEYS: ReadonlySet<string> = new Set(OPAQUE_METADATA_KEYS);

/** Unknown keys a decode error names (each clipped to `NAMED_KEY_CHARS`); the rest are counted. */
const NAMED_KEYS = 3;
const NAMED_KEY_CHARS = 60;

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid frame';
  const path = issue.path.length > 0 ? issue.path.join('.') : 'frame';
  if (issue.code === 'unrecognized_keys') return `${path}: ${unknownKeys(issue.keys)}`;
  return `${path}: ${issue.message}`;
}

/**
 * A few of the unknown keys, clipped, and how many more: the reason closes the connection and
 * becomes every owed task's outcome message. zod's own message lists every key, and each was
 * listed again after it: a hello of 200,000 unknown keys (2.3 MB) made a reason of 4.4 million
 * characters, carried to each of its callers' answers.
 */
function unknownKeys(keys: readonly string[]): string {
  const named = keys.slice(0, NAMED_KEYS).map((key) => JSON.stringify(key.length > NAMED_KEY_CHARS ? `${key.slice(0, NAMED_KEY_CHARS)}…` : key));
  const more = keys.length > NAMED_KEYS ? ` and ${keys.length - NAMED_KEYS} more` : '';
  return `${keys.length === 1 ? 'unknown key' : 'unknown keys'} ${named.join(', ')}${more}`;
}

type Json = Record<string, unknown>;

/**
 * Parses a line. A line that may carry opaque values (it names `metadata`) is scanned in full: the
 * envelope is parsed with those values replaced by `0`, then their raw text is hung back on. Any
 * other line is parsed straight away and scanned only when its key counts say it has a duplicate.
 */
function parseLine(text: string): Json | string {
  const textKeys = countTextKeys(text);
  if (textKeys === HAS_METADATA) return parseWithOpaque(text);
  if (textKeys === TOO_DEEP) {
    // The scan names where (it stops at the same level, so it reads no further than that).
    const scanned = scanJson(text, NO_KEYS);
    return `not a JSON frame: ${scanned.ok ? `nesting deeper than ${MAX_NESTING_DEPTH}` : scanned.reason}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `not a JSON frame: ${(err as Error).message}`;
  }
  if (textKeys !== countParsedKeys(value)) {
    const scanned = scanJson(text, NO_KEYS);
    return `not a JSON frame: ${scanned.ok ? 'duplicate key' : scanned.reason}`;
  }
  return isObject(value) ? value : 'a frame is a JSON object';
}

const NO_KEYS: ReadonlySet<string> = new Set();

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseWithOpaque(text: string): Json | string {
  const scanned = scanJson(text, OPAQUE_KEYS);
  if (!scanned.ok) return `not a JSON frame: ${scanned.reason}`;
  let value: unknown;
  try {
    let envelope = '';
    let from = 0;
    for (const span of scanned.spans) {
      envelope += text.slice(from, span.start) + '0';
      from = span.end;
    }
    value = JSON.parse(envelope + text.slice(from));
  } catch (err) {
    return `not a JSON frame: ${(err as Error).message}`;
  }
  if (!isObject(value)) return 'a frame is a JSON object';
  if (scanned.spans.length > 0) {
    const metadata = (value.result as Json).metadata as Json;
    for (const span of scanned.spans) metadata[span.key] = new RawJson(text.slice(span.start, span.end));
  }
  return value;
}

export function decodeFrameText<M>(
  text: string,
  direction: Direction<M>,
  resultMethod: (id: number) => string | undefined,
): TextDecoded<M> {
  const value = parseLine(text);
  if (typeof value === 'string') return { type: 'invalid', reason: value };
  // Parsed JSON has no undefined values and Object.prototype none of these names: a plain read tells.
  const isMessage = value.method !== undefined;
  const isResult = value.result !== undefined;
  const isError = value.error !== undefined;
  if (Number(isMessage) + Number(isResult) + Number(isError) !== 1) {
    return { type: 'invalid', reason: 'a frame has exactly one of method, result, error' };
  }
  if (isMessage) {
    const quick = direction.quickMessage(value);
    if (quick !== undefined) return { type: 'message', frame: quick };
    const parsed = direction.messages.safeParse(value);
    return parsed.success ? { type: 'message', frame: parsed.data } : { type: 'invalid', reason: firstIssue(parsed.error) };
  }
  if (isError) {
    const parsed = direction.errorFrame.safeParse(value);
    return parsed.success ? { type: 'error', frame: parsed.data } : { type: 'invalid', reason: firstIssue(parsed.error) };
  }
  let envelope = direction.quickResultEnvelope(value);
  if (envelope === undefined) {
    const parsed = direction.resultEnvelope.safeParse(value);
    if (!parsed.success) return { type: 'invalid', reason: firstIssue(parsed.error) };
    envelope = parsed.data;
  }
  const { id } = envelope;
  const method = resultMethod(id);
  if (method === undefined) return { type: 'orphan', id };
  const schema = direction.results[method];
  if (!schema) return { type: 'invalid', reason: `no result is expected for ${method}` };
  const quick = direction.quickResults[method]?.(envelope.result);
  if (quick !== undefined) return { type: 'result', frame: { v: 3, id, result: quick }, method };
  const result = schema.safeParse(envelope.result);
  if (!result.success) return { type: 'invalid', reason: `result.${firstIssue(result.error)}` };
  return { type: 'result', frame: { v: 3, id, result: result.data }, method };
}

// Stands in for a RawJson while JSON.stringify runs; the nonce keeps peer text from forging one.
const SENTINEL = `\u0000opaque-${randomBytes(12).toString('hex')}-`;

/** Encodes a frame as one line (no newline), splicing opaque values back in verbatim. */
export function encodeFrame(frame: object): string {
  const metadata = ((frame as Json).result as Json | undefined)?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return JSON.stringify(frame);
  if (!Object.values(metadata).some((value) => value instanceof RawJson)) return JSON.stringify(frame);
  const raws: RawJson[] = [];
  const text = JSON.stringify(frame, (_key, value: unknown) => {
    if (!(value instanceof RawJson)) return value;
    raws.push(value);
    return `${SENTINEL}${raws.length - 1}`;
  });
  return raws.reduce((out, raw, n) => {
    const marker = JSON.stringify(`${SENTINEL}${n}`);
    const at = out.indexOf(marker);
    return out.slice(0, at) + raw.text + out.slice(at + marker.length);
  }, text);
}

import { z } from 'zod';
import { nestsTooDeep } from '../../fabric/codec/key-count.js';

/** A JSON-RPC id as A2A clients send it. */
export const RpcId = z.union([z.string(), z.number(), z.null()]);
export type RpcId = z.infer<typeof RpcId>;

/**
 * What the gateway reads of an incoming request: its id and method, and the fields that can name
 * a task (0.3 and 1.0 alike, camelCase and the snake_case the SDK also accepts). Everything else
 * is the runner's business and passes on untouched (the body as it came): these schemas leave
 * other members unread, where loose objects copied each one (hundreds of thousands in one body:
 * seconds of the main thread).
 */
const TaskMessageRefs = z.object({
  taskId: z.unknown().optional(),
  task_id: z.unknown().optional(),
  referenceTaskIds: z.unknown().optional(),
  reference_task_ids: z.unknown().optional(),
});
const TaskRefs = z.object({
  id: z.unknown().optional(),
  taskId: z.unknown().optional(),
  task_id: z.unknown().optional(),
  name: z.unknown().optional(),
  message: TaskMessageRefs.optional().catch(undefined),
});

/** The most requests one batch may hold; a longer batch is refused whole (a single -32600, id null), its items never read. */
export const MAX_BATCH_ITEMS = 100;

export const RpcRequestEnvelope = z.object({
  jsonrpc: z.unknown().optional(),
  id: RpcId.optional(),
  method: z.string().optional(),
  params: z.unknown().optional(),
});
export type RpcRequestEnvelope = z.infer<typeof RpcRequestEnvelope>;

/**
 * A JSON body as JSON-RPC reads it: one request or a batch, each item an envelope or `undefined`
 * (not an object, or not a valid envelope), and each item as it came (`raw`, for the task ids it
 * names even when it is not a valid envelope). A batch over `MAX_BATCH_ITEMS` is `tooLong`, a body
 * nesting more than main/jsonrpc's `MAX_NESTING_DEPTH` is `tooDeep` (never parsed: `JSON.parse`
 * builds every level, seconds for 10 MiB of `[`); either has no items at all.
 */
export interface RpcBody {
  batch: boolean;
  tooLong: boolean;
  tooDeep: boolean;
  items: (RpcRequestEnvelope | undefined)[];
  raw: unknown[];
}

const BOM = '\uFEFF';

/** The body's requests, or `undefined` when it is not JSON (a leading UTF-8 BOM is skipped, as JSON body parsers do). */
export function rpcBodyOf(body: Buffer | undefined): RpcBody | undefined {
  let value: unknown;
  try {
    let text = body?.toString('utf8') ?? '';
    if (text.startsWith(BOM)) text = text.slice(BOM.length);
    if (nestsTooDeep(text)) return { batch: false, tooLong: false, tooDeep: true, items: [], raw: [] };
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const batch = Array.isArray(value);
  if (batch && (value as unknown[]).length > MAX_BATCH_ITEMS) return { batch, tooLong: true, tooDeep: false, items: [], raw: [] };
  const raw = batch ? (value as unknown[]) : [value];
  const items = raw.map((item) => {
    const parsed = RpcRequestEnvelope.safeParse(item);
    return parsed.success ? parsed.data : undefined;
  });
  return { batch, tooLong: false, tooDeep: false, items, raw };
}

/** The request envelopes in a body (a batch gives several), or none when it is not JSON. */
export function envelopesOf(body: RpcBody | undefined): RpcRequestEnvelope[] {
  return (body?.items ?? []).filter((item): item is RpcRequestEnvelope => item !== undefined);
}

/** The request's id when the body is one request with one, else `null` (for error answers). */
export function requestIdOf(envelopes: readonly RpcRequestEnvelope[]): RpcId {
  return envelopes.length === 1 ? (envelopes[0]!.id ?? null) : null;
}

/**
 * One field of a request that can name a task: where it is (`params.message.taskId`), its value
 * as it came, and what it holds: an `id`, an `item` of a list of ids (where the runner reads
 * even `null` as text), a resource `name` (`tasks/<id>`), or a `list` of ids that is not an
 * array (an array's items are fields of their own).
 */
interface TaskIdField {
  path: string;
  value: unknown;
  kind: 'id' | 'item' | 'name' | 'list';
}

/**
 * Every field of a request that can name a task, set or not: `params.id` (get, cancel,
 * resubscribe), `params.taskId` / `params.task_id` (push configs), `params.message.taskId` /
 * `task_id` and each item of `params.message.referenceTaskIds` / `reference_task_ids` (send,
 * stream), and a 1.0 resource name `params.name`. `item` is the request as it came, whether or
 * not it is a valid envelope.
 */
function taskIdFields(item: unknown): TaskIdField[] {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return [];
  const parsed = TaskRefs.safeParse((item as { params?: unknown }).params);
  if (!parsed.success) return [];
  const p = parsed.data;
  const fields: TaskIdField[] = [
    { path: 'params.id', value: p.id, kind: 'id' },
    { path: 'params.taskId', value: p.taskId, kind: 'id' },
    { path: 'params.task_id', value: p.task_id, kind: 'id' },
    { path: 'params.message.taskId', value: p.message?.taskId, kind: 'id' },
    { path: 'params.message.task_id', value: p.message?.task_id, kind: 'id' },
  ];
  for (const key of ['referenceTaskIds', 'reference_task_ids'] as const) {
    const values = p.message?.[key];
    const path = `params.message.${key}`;
    if (Array.isArray(values)) values.forEach((value: unknown, i) => fields.push({ path: `${path}[${i}]`, value, kind: 'item' }));
    else fields.push({ path, value: values, kind: 'list' });
  }
  fields.push({ path: 'params.name', value: p.name, kind: 'name' });
  return fields;
}

/**
 * Every task id a request names (the fields of `taskIdFields`). A number is read as its text (the
 * SDK turns it into a string). A value of any other type is not read here: `malformedTaskIdsOf`
 * has the request refused before anything is forwarded.
 */
export function taskIdsOf(item: unknown): string[] {
  const ids: string[] = [];
  for (const { value, kind } of taskIdFields(item)) {
    const id = kind === 'name' ? taskIdOfName(value) : typeof value === 'number' ? String(value) : value;
    if (kind !== 'list' && typeof id === 'string' && id !== '') ids.push(id);
  }
  return ids;
}

/**
 * The task-id fields of a request that are set (neither absent nor `null`) with a value the
 * owned-task check cannot read as a runner does: an id that is not a string or a number, a
 * resource name that is not a string, a `referenceTaskIds` that is not an array. The SDK's runner
 * reads a set id with `String(value)`, so `["task-…"]` is that task to it while it names nothing
 * here: such a request is refused, never forwarded. A `null` id is absent to the runner as here
 * (but `null` in a list of ids is the text `null` to it: refused).
 * Each entry says the field, what it is and what it must be.
 */
export function malformedTaskIdsOf(item: unknown): string[] {
  const malformed: string[] = [];
  for (const { path, value, kind } of taskIdFields(item)) {
    if (value === undefined || (value === null && kind !== 'item')) continue;
    const readable = kind === 'id' || kind === 'item' ? typeof value === 'string' || typeof value === 'number' : kind === 'name' && typeof value === 'string';
    if (!readable) malformed.push(`${path} is ${typeOf(value)}, not ${EXPECTED[kind]}`);
  }
  return malformed;
}

const EXPECTED: Record<TaskIdField['kind'], string> = { id: 'a string or a number', item: 'a string or a number', name: 'a string', list: 'an array' };

/** A JSON value's type, as a message says it. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'boolean' ? 'a boolean' : typeof value === 'number' ? 'a number' : 'a string';
}

/** The task id in a 1.0 resource name `tasks/<id>` (or `tasks/<id>/…`). */
function taskIdOfName(name: unknown): string | undefined {
  return typeof name === 'string' ? /^tasks\/([^/]+)/.exec(name)?.[1] : undefined;
}

/** The task a `tasks/get`/`GetTask` asks for: `params.id`, or the resource name `params.name: "tasks/<id>"`; `''` when neither. */
export function taskIdOfGet(envelope: RpcRequestEnvelope): string {
  const parsed = TaskRefs.safeParse(envelope.params);
  if (!parsed.success) return '';
  const { id, name } = parsed.data;
  if (typeof id === 'string' && id !== '') return id;
  return taskIdOfName(name) ?? (typeof id === 'number' ? String(id) : '');
}

const RpcErrorObject = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

/** A JSON-RPC 2.0 response: exactly one of `result` and `error`. */
export const RpcResponse = z
  .object({ jsonrpc: z.literal('2.0'), id: RpcId, result: z.unknown().optional(), error: RpcErrorObject.optional() })
  .refine((r) => ('result' in r) !== ('error' in r), { message: 'exactly one of result and error' });

/** Whether a parsed value is a JSON-RPC response (or a non-empty batch of them). */
export function isRpcResponse(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every((item) => RpcResponse.safeParse(item).success);
  return RpcResponse.safeParse(value).success;
}

/**
 * Whether the runner's text (a JSON answer, or a stream event's data) is a JSON-RPC response. Text
 * nesting more than main/jsonrpc's `MAX_NESTING_DEPTH` is not, and is never parsed: `JSON.parse`
 * builds every level, and 10 MiB of `[` from a runner held the gateway's main thread ~5 s of CPU
 * (answers and events may be 32 MiB) before its 502.
 */
export function isRpcResponseText(text: string): boolean {
  if (nestsTooDeep(text)) return false;
  try {
    return isRpcResponse(JSON.parse(text));
  } catch {
    return false;
  }
}

/** A JSON-RPC error answer. */
export function rpcError(id: RpcId, code: number, message: string): { jsonrpc: '2.0'; id: RpcId; error: { code: number; message: string } } {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const TRANSPORT_ERROR = -32000;

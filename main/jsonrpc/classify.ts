import type { BatchEntry } from './frame.js';
import { RequestIdSchema, isNotification, isRequest, type Message, type Notification, type Request, type RequestId, type Response } from './wire.js';

/**
 * What the protocol layer does with one incoming value, alone or as a batch entry.
 * A malformed value that is response-shaped and not call-shaped is ignored, because a response
 * must never itself be answered; every other malformed value is an Invalid Request, answered
 * under its id when that id is readable, else under `null`.
 */
export type Incoming =
  | { readonly kind: 'request'; readonly request: Request }
  | { readonly kind: 'notification'; readonly notification: Notification }
  | { readonly kind: 'response'; readonly response: Response }
  | { readonly kind: 'invalid'; readonly id: RequestId | null }
  | { readonly kind: 'ignored' };

export function classifyMessage(message: Message): Incoming {
  if (isRequest(message)) return { kind: 'request', request: message };
  if (isNotification(message)) return { kind: 'notification', notification: message };
  return { kind: 'response', response: message };
}

export function classifyMalformed(value: unknown): Incoming {
  if (!isObject(value)) return { kind: 'invalid', id: null };
  const callShaped = 'method' in value;
  const responseShaped = 'result' in value || 'error' in value;
  if (responseShaped && !callShaped) return { kind: 'ignored' };
  const id = RequestIdSchema.safeParse(value['id']);
  return { kind: 'invalid', id: id.success ? id.data : null };
}

export function classifyEntry(entry: BatchEntry): Incoming {
  return entry.kind === 'message' ? classifyMessage(entry.message) : classifyMalformed(entry.value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

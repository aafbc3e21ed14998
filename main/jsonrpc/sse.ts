import { serializeFrame, type TransportFrame } from './frame.js';

export interface SseEvent {
  /** The `event:` field; a client treats its absence as `message`. */
  readonly event?: string;
  readonly data: string;
  readonly id?: string;
}

/**
 * One Server-Sent Events block. Each line of `data` becomes its own `data:` line (any of the SSE
 * line breaks), so a client's rejoining gives back `data` exactly; `event` and `id` are single
 * lines by the format's rules, so a line break there is refused.
 */
export function formatSseEvent({ event, data, id }: SseEvent): string {
  let block = '';
  if (event !== undefined) block += `event: ${singleLine('event', event)}\n`;
  if (id !== undefined) block += `id: ${singleLine('id', id)}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) block += `data: ${line}\n`;
  return `${block}\n`;
}

/** A comment block: ignored by clients, it keeps proxies and idle timers from closing the stream. */
export function formatSseComment(text = 'keep-alive'): string {
  return `${text
    .split(/\r\n|\r|\n/)
    .map((line) => `: ${line}\n`)
    .join('')}\n`;
}

/** A JSON-RPC frame as the `message` event the MCP HTTP+SSE transport (2024-11-05) sends. */
export function formatSseMessage(frame: TransportFrame): string {
  return formatSseEvent({ event: 'message', data: serializeFrame(frame) });
}

function singleLine(field: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new RangeError(`SSE '${field}' must be one line`);
  return value;
}

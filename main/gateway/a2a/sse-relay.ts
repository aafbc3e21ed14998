import { isRpcResponse, rpcError, INTERNAL_ERROR, type RpcId } from './wire.js';

/** One event's text may not grow past this while it waits for its end. */
export const MAX_SSE_EVENT_BYTES = 32 * 1024 * 1024;

const SEPARATORS = [Buffer.from('\r\n\r\n'), Buffer.from('\n\n'), Buffer.from('\r\r')];

/** The end of the first whole event in `buffer`: where its blank line ends. */
function eventEnd(buffer: Buffer): number | undefined {
  let best: number | undefined;
  for (const sep of SEPARATORS) {
    const at = buffer.indexOf(sep);
    if (at >= 0 && (best === undefined || at + sep.length < best)) best = at + sep.length;
  }
  return best;
}

/** The event's `data` (its `data:` lines joined), or `undefined` for a comment or a field-only block. */
function dataOf(event: Buffer): string | undefined {
  const lines = event.toString('utf8').split(/\r\n|\r|\n/);
  let data: string | undefined;
  for (const line of lines) {
    if (!line.startsWith('data')) continue;
    if (line !== 'data' && line[4] !== ':') continue;
    let value = line.slice(5);
    if (value.startsWith(' ')) value = value.slice(1);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

/** An SSE `error` event carrying a JSON-RPC error, as the A2A SDK's own server writes one. */
export function errorEvent(id: RpcId, message: string): Buffer {
  return Buffer.from(`event: error\ndata: ${JSON.stringify(rpcError(id, INTERNAL_ERROR, message))}\n\n`);
}

export interface RelayHooks {
  /** Whether the client has gone (then nothing more is written, not even an error). */
  clientGone(): boolean;
  /** Ends the upstream request (a bad event: nothing after it is relayed). */
  abortUpstream(reason: Error): void;
  /** The message of the error event that ends a stream which broke off (or went silent) with `err`. */
  brokeOff(err: unknown): string;
}

/**
 * The runner's event stream, event by event as each one is whole, its bytes as they came. An
 * event whose data is not a JSON-RPC response ends the relay with an `error` event; so does the
 * stream breaking off or going silent for the idle timeout. Comments and events without data pass through as they are.
 */
export async function* relayEvents(upstream: AsyncIterable<Buffer>, id: RpcId, hooks: RelayHooks): AsyncGenerator<Buffer, void, undefined> {
  let pending: Buffer = Buffer.alloc(0);
  try {
    for await (const chunk of upstream) {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (let end = eventEnd(pending); end !== undefined; end = eventEnd(pending)) {
        const event = pending.subarray(0, end);
        pending = pending.subarray(end);
        const data = dataOf(event);
        if (data !== undefined && !isJsonRpcText(data)) {
          hooks.abortUpstream(new Error('the runner sent an event that is not JSON-RPC'));
          yield errorEvent(id, 'the remote runner sent a stream event that is not a JSON-RPC response');
          return;
        }
        yield event;
      }
      if (pending.length > MAX_SSE_EVENT_BYTES) {
        hooks.abortUpstream(new Error('an event over the cap'));
        yield errorEvent(id, `the remote runner sent a stream event over ${MAX_SSE_EVENT_BYTES} bytes`);
        return;
      }
    }
  } catch (err) {
    if (hooks.clientGone()) return;
    yield errorEvent(id, hooks.brokeOff(err));
    return;
  }
  // Whatever is left is not a whole event; a client discards it, but it is the runner's to send.
  if (pending.length > 0) yield pending;
}

function isJsonRpcText(text: string): boolean {
  try {
    return isRpcResponse(JSON.parse(text));
  } catch {
    return false;
  }
}

export function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const line = message.split('\n')[0] ?? message;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

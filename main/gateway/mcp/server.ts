import { z } from 'zod';
import { Dispatcher, JSONRPC_VERSION, RequestIdSchema, RpcError, messageFrame, type MessageFrame } from '../../jsonrpc/index.js';
import type { CallableModule, ModuleTool } from '../modules.js';
import { cancelledError, pluginFailure } from './errors.js';
import { InflightCalls } from './inflight-calls.js';
import { hearsServerNotifications } from './peers.js';
import { negotiateVersion } from './versions.js';

/** What `tools/list` answers for a `parameters-schema` that is not a JSON object. */
const FALLBACK_INPUT_SCHEMA = { type: 'object', properties: {} } as const;

/**
 * Sent on a module's open SSE sessions when its tools may have changed: the module was reloaded
 * (a new instance swapped in) or came online again. The client asks `tools/list` again.
 */
export const TOOLS_LIST_CHANGED: MessageFrame = messageFrame({ jsonrpc: JSONRPC_VERSION, method: 'notifications/tools/list_changed' });

/**
 * Params schemas name what the handlers read and look at nothing else: zod's default object
 * leaves the other members unread, where a loose object copied every one (600,000 extra members
 * in a `tools/call`: ~3 s of the main thread on top of the parse).
 */
const InitializeParams = z.object({ protocolVersion: z.string() });

/** Checked without copying: the guest gets exactly what the client sent. */
const ToolArguments = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'arguments must be an object',
);
const CallToolParams = z.object({ name: z.string(), arguments: ToolArguments.optional() });
const CancelledParams = z.object({ requestId: RequestIdSchema, reason: z.string().optional() });

/**
 * The MCP handler set for one module, on one Dispatcher that every transport (Streamable HTTP,
 * legacy SSE) feeds. `initialize`, `ping`, `tools/list`, `tools/call`, and
 * `notifications/cancelled` (which stops the named call of the same peer, found in `inflight`);
 * other notifications need no handler (the Dispatcher never answers them) and any other method
 * is -32601.
 */
export function mcpDispatcher(module: CallableModule, onError: (err: unknown) => void, inflight = new InflightCalls()): Dispatcher {
  const dispatcher = new Dispatcher({ onHandlerError: (err) => onError(err) });
  // Typed on the name, so that TypeScript knows a call to it never returns.
  const failed: (err: unknown) => never = (err) => {
    if (err instanceof RpcError) throw err;
    if (typeof err !== 'object' || err === null || !('kind' in err)) onError(err);
    throw pluginFailure(err);
  };

  dispatcher.onRequest('initialize', InitializeParams, (params, context) => ({
    protocolVersion: negotiateVersion(params.protocolVersion),
    // listChanged only where it is sent: a reload or a module coming online is announced on the
    // module's legacy SSE sessions (TOOLS_LIST_CHANGED); Streamable HTTP has no server stream.
    capabilities: { tools: { listChanged: hearsServerNotifications(context.peer) } },
    serverInfo: { name: module.name, version: module.version },
  }));

  dispatcher.onRequest('ping', () => ({}));

  dispatcher.onRequest('tools/list', async () => {
    const tools = await module.listTools().catch(failed);
    return { tools: tools.map(toolEntry) };
  });

  dispatcher.onNotification('notifications/cancelled', CancelledParams, (params, context) => {
    inflight.cancel(context.peer, params.requestId, `notifications/cancelled${params.reason ? ` (${params.reason})` : ''}`);
  });

  dispatcher.onRequest('tools/call', CallToolParams, async (params, context) => {
    // The Dispatcher only calls request handlers for calls that have an id.
    const id = context.id!;
    const call = inflight.begin(context.peer, id);
    let outcome;
    try {
      outcome = await module.invokeTool(
        {
          name: params.name,
          argumentsJson: argumentsJsonOf(params.arguments ?? {}),
          callId: String(id),
        },
        { signal: call.signal },
      );
    } catch (err) {
      failed(call.signal.aborted && isCancelled(err) ? cancelledError(call.signal.reason) : err);
    } finally {
      call.end();
    }
    if (outcome.ok) return { content: [{ type: 'text', text: outcome.value.content }] };
    if (outcome.error.kind === 'unknown-tool') throw RpcError.invalidParams(`unknown tool '${params.name}'`);
    return { content: [{ type: 'text', text: `${outcome.error.kind}: ${outcome.error.message}` }], isError: true };
  });

  return dispatcher;
}

/** The arguments as JSON; nested deeper than `JSON.stringify` can go (a RangeError), an Invalid params, not a handler crash. */
function argumentsJsonOf(args: Record<string, unknown>): string {
  try {
    return JSON.stringify(args);
  } catch {
    throw RpcError.invalidParams('arguments nested too deeply to encode');
  }
}

function isCancelled(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { kind?: unknown }).kind === 'cancelled';
}

function toolEntry(tool: ModuleTool): { name: string; description: string; inputSchema: unknown } {
  return { name: tool.name, description: tool.description, inputSchema: inputSchemaOf(tool.parametersSchema) };
}

/**
 * The guest's `parameters-schema`; `{"type":"object"}` added in front when it names no type (`{}`
 * is "any arguments", and MCP clients refuse an `inputSchema` without it); and
 * `{"type":"object","properties":{}}` when it is not a JSON object (main/plugins refuses such a
 * schema at load; another module directory may not).
 */
function inputSchemaOf(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return 'type' in value ? value : { type: 'object', ...value };
  } catch {
    // falls through to the fallback
  }
  return FALLBACK_INPUT_SCHEMA;
}

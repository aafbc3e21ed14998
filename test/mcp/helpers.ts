import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import type { ModuleDirectory, ProtocolGatewayOptions } from '../../main/gateway/index.js';
import { ModuleRegistry, type CreditMeter } from '../../main/plugins/index.js';
import { startGateway, tempDir, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest, type HttpResponse } from '../helpers/http.js';
import { buildFixture, fixtureManifest, writeModuleDir, type FixtureKind } from '../helpers/wasm-fixtures.js';
import { SseStream } from './sse-reader.js';

/** Modules a test file can ask for: a fixture kind and what its manifest says. */
export const MODULES = {
  /** The echo fixture served over MCP: `echo`, `fail` and the capability tools. */
  echo: { kind: 'echo', manifest: fixtureManifest('echo') },
  /** The same component with `mcp = false`: must look exactly like an unknown module. */
  hidden: { kind: 'echo', manifest: fixtureManifest('hidden').replace('mcp = true', 'mcp = false') },
  trap: { kind: 'trap', manifest: fixtureManifest('trap') },
  big: { kind: 'big-output', manifest: fixtureManifest('big') },
  loop: { kind: 'loop', manifest: fixtureManifest('loop', '\n[resources]\nmax_execution_ms = 300\n') },
  slow: { kind: 'slow', manifest: fixtureManifest('slow') },
  /** The loop fixture with the default 60 s limit: only a cancellation stops it in a test's time. */
  spin: { kind: 'loop', manifest: fixtureManifest('spin') },
} as const satisfies Record<string, { kind: FixtureKind; manifest: string }>;

export type ModuleName = keyof typeof MODULES;

/** The credit meter's reason for a refused call; it refuses every call to a tool named `refused`. */
export const NO_CREDIT = 'no credit left for this call';

export interface MeteredCall {
  module: string;
  tool: string;
  callId: string;
  caller?: string | undefined;
}

export interface McpGateway extends RunningGateway {
  registry: ModuleRegistry;
  /** Every line the registry logged. */
  logs: { level: string; message: string; fields?: Record<string, unknown> | undefined }[];
  /** Every call the credit meter saw (it sees each `invokeTool` first), in order. */
  metered: MeteredCall[];
  /** Resolves once the credit meter has seen the call with this call-id. */
  meteredCall(callId: string): Promise<MeteredCall>;
  /** `POST /mcp/{module}` with the headers a Streamable HTTP client sends, plus `headers`. */
  post(path: string, body: string | object, headers?: Record<string, string>): Promise<HttpResponse>;
}

export const STREAMABLE_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
} as const;

/**
 * A real gateway on a real Unix socket serving real plugin components through the real
 * `ModuleRegistry`. Components are built from WAT at test time and transpiled into a private cache.
 */
export async function startMcpGateway(names: readonly ModuleName[], options: ProtocolGatewayOptions = {}): Promise<McpGateway> {
  const root = tempDir('chatty-mcp-');
  const metered: MeteredCall[] = [];
  const waiting = new Map<string, (call: MeteredCall) => void>();
  const meter: CreditMeter = {
    admit: (module, call) => {
      metered.push({ module, ...call });
      waiting.get(call.callId)?.({ module, ...call });
      return call.tool === 'refused' ? { ok: false, reason: NO_CREDIT } : true;
    },
  };
  const logs: McpGateway['logs'] = [];
  const registry = new ModuleRegistry({ cacheDir: join(root.path, 'cache'), meter, logger: { log: (level, message, fields) => logs.push({ level, message, fields }) } });
  const modulesDir = join(root.path, 'modules');
  for (const name of names) {
    const spec = MODULES[name];
    writeModuleDir(modulesDir, name, { manifest: spec.manifest, component: await buildFixture(spec.kind) });
  }
  const report = await registry.scanDirectory(modulesDir);
  if (report.failed.length > 0) throw new Error(`fixtures failed to load: ${JSON.stringify(report.failed)}`);
  // The registry is the gateway's module directory as it is, with no adapter.
  const directory: ModuleDirectory = registry;
  const gw = await startGateway(directory, options);
  return {
    ...gw,
    registry,
    logs,
    metered,
    meteredCall: (callId) => {
      const seen = metered.find((c) => c.callId === callId);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiting.set(callId, resolve));
    },
    post: (path, body, headers = {}) =>
      unixRequest(gw.socketPath, {
        method: 'POST',
        path,
        headers: { ...gw.auth, ...STREAMABLE_HEADERS, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    close: async () => {
      await gw.close();
      await registry.close();
      root.remove();
    },
  };
}

/** A fetch that goes over the gateway's Unix socket (undici's `connect.socketPath`). */
export function socketFetch(socketPath: string): { fetch: typeof fetch; close: () => Promise<void> } {
  const dispatcher = new Agent({ connect: { socketPath } });
  const fetchOverSocket = ((input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
  return { fetch: fetchOverSocket, close: () => dispatcher.close() };
}

export type TransportKind = 'streamable' | 'sse';

/** A raw legacy SSE session on `/mcp/{module}/sse`: its stream, and a POST to its endpoint that resolves with the status. */
export async function openSseSession(gw: RunningGateway, module: string): Promise<{ stream: SseStream; post: (body: object) => Promise<number> }> {
  const stream = await SseStream.open(gw.socketPath, `/mcp/${module}/sse`, gw.auth);
  const first = await stream.next();
  const endpoint = first.kind === 'event' ? first.data : '';
  const post = async (body: object): Promise<number> =>
    (await unixRequest(gw.socketPath, { method: 'POST', path: endpoint, headers: { ...gw.auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })).status;
  return { stream, post };
}

/** The official SDK client connected to `/mcp/{module}` (or its `/sse`) over the Unix socket. */
export async function connectClient(gw: RunningGateway, module: string, kind: TransportKind): Promise<{ client: Client; close: () => Promise<void> }> {
  const over = socketFetch(gw.socketPath);
  const requestInit = { headers: gw.auth };
  const transport =
    kind === 'streamable'
      ? new StreamableHTTPClientTransport(new URL(`http://localhost/mcp/${module}`), { fetch: over.fetch, requestInit })
      : // Its EventSource GET goes through the same `fetch` with the same headers.
        new SSEClientTransport(new URL(`http://localhost/mcp/${module}/sse`), { fetch: over.fetch, requestInit });
  const client = new Client({ name: 'chatty-mcp-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await client.close();
      await over.close();
    },
  };
}

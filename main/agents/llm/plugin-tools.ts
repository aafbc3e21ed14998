import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AgentTool, JsonSchemaObject } from './agent-tool.js';
import { readGatewayToken, type GatewayLocation } from './gateway-location.js';
import { pluginToolName } from './tool-names.js';
import { unixSocketFetch } from './unix-fetch.js';

/** The client name the gateway's edge log sees in `initialize`. */
const CLIENT_INFO = { name: 'chatty-llm-agent', version: '1.0.0' } as const;
/** The host in request URLs: the gateway's loopback check wants a loopback Host. */
const ORIGIN = 'http://localhost';

/** The part of the gateway's index (`GET /`) the agent reads. */
const GatewayIndex = z.object({
  gateway: z.literal('chatty-protocol-gateway'),
  modules: z.array(z.object({ name: z.string(), description: z.string().optional(), surfaces: z.array(z.string()) })),
});

/** The gateway could not be asked for its modules or their tools. */
export class GatewayUnavailableError extends Error {
  override readonly name = 'GatewayUnavailableError';
}

/**
 * The gateway's MCP plugin tools as the model's tools: every module the gateway serves over MCP
 * (`GET /`), one official MCP client each on `POST /mcp/<module>` over the gateway's Unix socket
 * with its bearer token, each module's `tools/list` (all pages). A tool call is the module's
 * `tools/call`; the plugins run in the gateway, never loaded here.
 */
export class PluginTools {
  private constructor(
    readonly tools: readonly AgentTool[],
    /** The modules whose tools are offered. */
    readonly modules: readonly string[],
    private readonly clients: readonly Client[],
    private readonly closeFetch: () => void,
  ) {}

  static async connect(location: GatewayLocation, signal: AbortSignal): Promise<PluginTools> {
    const token = readGatewayToken(location);
    const over = unixSocketFetch(location.socketPath);
    const headers = { authorization: `Bearer ${token}` };
    const clients: Client[] = [];
    try {
      const index = await readIndex(over.fetch, headers, location, signal);
      const mcpModules = index.modules.filter((m) => m.surfaces.includes(`/mcp/${m.name}`));
      const taken = new Set<string>();
      const tools: AgentTool[] = [];
      for (const module of mcpModules) {
        const client = new Client(CLIENT_INFO);
        const transport = new StreamableHTTPClientTransport(new URL(`/mcp/${encodeURIComponent(module.name)}`, ORIGIN), {
          fetch: over.fetch,
          requestInit: { headers },
        });
        try {
          await client.connect(transport, { signal });
        } catch (err) {
          throw new GatewayUnavailableError(`the gateway's module ${module.name} did not start an MCP session: ${messageOf(err)}`);
        }
        clients.push(client);
        for (const tool of await listAllTools(client, module.name, signal)) {
          const name = pluginToolName(module.name, tool.name, taken);
          taken.add(name);
          tools.push(pluginTool(client, module.name, tool, name));
        }
      }
      return new PluginTools(tools, mcpModules.map((m) => m.name), clients, over.close);
    } catch (err) {
      await Promise.allSettled(clients.map((c) => c.close()));
      over.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
    this.closeFetch();
  }
}

interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: JsonSchemaObject;
}

async function readIndex(
  fetchOverSocket: ReturnType<typeof unixSocketFetch>['fetch'],
  headers: Record<string, string>,
  location: GatewayLocation,
  signal: AbortSignal,
): Promise<z.infer<typeof GatewayIndex>> {
  let res: Response;
  try {
    res = await fetchOverSocket(`${ORIGIN}/`, { headers: { ...headers, accept: 'application/json' }, signal });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new GatewayUnavailableError(`the gateway at ${location.socketPath} could not be reached: ${messageOf(err)}`);
  }
  const text = await res.text();
  if (res.status === 401) throw new GatewayUnavailableError(`the gateway at ${location.socketPath} refused the token in ${location.tokenPath}`);
  if (!res.ok) throw new GatewayUnavailableError(`the gateway at ${location.socketPath} answered GET / with HTTP ${res.status}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const index = GatewayIndex.safeParse(json);
  if (!index.success) throw new GatewayUnavailableError(`the server at ${location.socketPath} is not a chatty gateway (its GET / is not the gateway's index)`);
  return index.data;
}

async function listAllTools(client: Client, module: string, signal: AbortSignal): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  do {
    let page: Awaited<ReturnType<Client['listTools']>>;
    try {
      page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new GatewayUnavailableError(`the gateway's module ${module} did not list its tools: ${messageOf(err)}`);
    }
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

function pluginTool(client: Client, module: string, tool: ListedTool, name: string): AgentTool {
  const about = tool.description?.trim() || `the ${tool.name} tool`;
  return {
    name,
    description: `${about} (plugin tool ${JSON.stringify(tool.name)} of the ${module} module, run by the gateway)`,
    parameters: tool.inputSchema,
    async run(args, signal) {
      const argumentsObject = args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await client.callTool({ name: tool.name, arguments: argumentsObject }, undefined, { signal });
      } catch (err) {
        if (signal.aborted) throw err;
        // A JSON-RPC error (unknown tool, a trap, no credit): the model reads it and may go on.
        return `error: the gateway's ${module}/${tool.name} failed: ${messageOf(err)}`;
      }
      return toolResultText(result);
    },
  };
}

/** An MCP tool result as one text for the model: the text parts joined; other parts named; `isError` marked. */
export function toolResultText(raw: Awaited<ReturnType<Client['callTool']>>): string {
  const parsed = CallToolResultSchema.safeParse(raw);
  if (!parsed.success) return JSON.stringify(raw);
  const result = parsed.data;
  const parts = result.content.map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'resource':
        return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
      case 'resource_link':
        return `[resource link ${part.uri}]`;
      default:
        return `[${part.type} content, ${part.mimeType}]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = parts.join('\n');
  return result.isError === true ? `error: ${text}` : text;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

import { z } from 'zod';
import { describeFailure, readBody, type GatewayHttp } from './gateway-http.js';
import { BridgeStartError, notListening, type GatewayLocation } from './locate.js';

/** The part of the gateway's index (`GET /`) the bridge reads. */
const IndexSchema = z.object({
  modules: z.array(z.object({ name: z.string(), surfaces: z.array(z.string()) })),
});

/** Errors that mean nothing listens on the socket: a gateway killed without stopping leaves its files. */
const NOT_LISTENING = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET']);

/**
 * Asks the running gateway for its modules before reading stdin, so that a client configured
 * with no gateway running, a stale token or a misspelt module hears why at once, on stderr.
 */
export async function checkModule(http: GatewayHttp, location: GatewayLocation, module: string): Promise<void> {
  let status: number;
  let text: string;
  try {
    const res = await http.send('GET', '/');
    status = res.statusCode ?? 0;
    text = await readBody(res);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== undefined && NOT_LISTENING.has(code)) throw notListening(location, code);
    throw new BridgeStartError(`the gateway at ${location.socketPath} could not be reached: ${describeFailure(err)}`);
  }
  if (status === 401) {
    throw new BridgeStartError(`the gateway at ${location.socketPath} refused the token in ${location.tokenPath} (is it left from an earlier launch?)`);
  }
  let index: z.infer<typeof IndexSchema> | undefined;
  if (status === 200) {
    try {
      index = IndexSchema.parse(JSON.parse(text));
    } catch {
      index = undefined;
    }
  }
  if (index === undefined) throw new BridgeStartError(`the server at ${location.socketPath} is not a chatty gateway (GET / answered HTTP ${status})`);

  const mcp = index.modules.filter((m) => m.surfaces.includes(`/mcp/${m.name}`)).map((m) => m.name);
  if (mcp.includes(module)) return;
  const served = mcp.length === 0 ? 'no module over MCP' : `these modules over MCP: ${mcp.join(', ')}`;
  throw new BridgeStartError(`unknown module '${module}': the gateway at ${location.socketPath} serves ${served}`);
}

import { GatewayHttp } from '../mcp-stdio/gateway-http.js';
import { locateGateway, readToken, type GatewayLocation } from '../mcp-stdio/locate.js';
import { MAX_CONNECTIONS } from '../mcp-stdio/in-flight.js';
import { checkModule } from '../mcp-stdio/module-check.js';
import { McpRelay } from '../mcp-stdio/relay.js';
import { runStdioLoop } from '../mcp-stdio/stdio-loop.js';

export interface McpStdioIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/**
 * `chatty-gateway mcp-stdio <module> [--runtime-dir DIR]`: an MCP server on stdio for clients that
 * launch servers as commands, relaying each JSON-RPC line to the running gateway's
 * `POST /mcp/<module>`, concurrently (a cancellation reaches the call it names while it runs). Resolves to the exit code: 1 (with one stderr line) when no gateway is
 * running or the module is unknown, else 0 once stdin has ended and every answer is written.
 * stdout carries JSON-RPC lines only.
 */
export async function runMcpStdio(
  options: { module: string; runtimeDir?: string | undefined },
  io: McpStdioIo = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const report = (line: string): void => void io.stderr.write(`chatty-gateway: ${line}\n`);
  let location: GatewayLocation;
  let http: GatewayHttp | undefined;
  try {
    location = locateGateway(options.runtimeDir);
    http = new GatewayHttp(location.socketPath, location.token, MAX_CONNECTIONS);
    await checkModule(http, location, options.module);
  } catch (err) {
    http?.close();
    report(err instanceof Error ? err.message : String(err));
    return 1;
  }

  const gateway = http;
  // A restarted gateway writes a new token: the relay asks for it after a 401.
  const rereadToken = (refused: string): string | undefined => {
    try {
      const now = readToken(location.tokenPath);
      return now === refused ? undefined : now;
    } catch {
      return undefined;
    }
  };
  try {
    return await runStdioLoop({
      stdin: io.stdin,
      stdout: io.stdout,
      report,
      relay: (write) => new McpRelay({ http: gateway, module: options.module, write, report, rereadToken }),
      // Closing the connections makes the gateway cancel what still runs for a client that has gone.
      abandon: () => gateway.close(),
    });
  } finally {
    gateway.close();
  }
}

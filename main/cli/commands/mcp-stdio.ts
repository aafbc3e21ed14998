/** `chatty-gateway mcp-stdio <module>`: a stdio MCP server relaying to the running gateway. */
export async function runMcpStdio(
  options: { module: string; runtimeDir?: string | undefined },
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process,
): Promise<number> {
  io.stderr.write(`chatty-gateway: mcp-stdio '${options.module}' is not implemented yet\n`);
  return 1;
}

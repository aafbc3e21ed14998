/** `chatty-gateway plugin new <name> | build <dir>`: filled in by the plugin runtime work. */
export async function runPluginCommand(args: readonly string[]): Promise<number> {
  process.stderr.write(`chatty-gateway plugin: not implemented yet (${args.join(' ')})\n`);
  return 2;
}

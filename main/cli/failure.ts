/** A failure a user can act on is one line on stderr, never a stack trace; exit code 1. */
export function failure(err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`chatty-gateway: ${message}\n`);
  return 1;
}

import { printable } from './terminal-root/safe-text.js';

/** A failure a user can act on is one line on stderr, never a stack trace; exit code 1. Made printable: the message may quote a worker. */
export function failure(err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`chatty-gateway: ${printable(message)}\n`);
  return 1;
}

/** Owner-only Unix sockets are the only listeners (the gateway's, the participant socket); Windows has no equivalent yet. */
export const WINDOWS_UNSUPPORTED =
  'chatty-protocol-gateway: owner-only Unix sockets are macOS/Linux-only for now; ' +
  'Windows needs an owner-only named-pipe DACL, which is not implemented yet';

/** A place refused by the owner-only rules (a runtime directory, a socket path, a leftover socket). */
export class AccessError extends Error {
  override readonly name = 'AccessError';
}

export function refuseWindows(platform: NodeJS.Platform = process.platform): void {
  if (platform === 'win32') throw new AccessError(WINDOWS_UNSUPPORTED);
}

/** The uid this process runs as; `process.getuid` exists on every Unix. */
export function currentUid(): number {
  if (typeof process.getuid !== 'function') throw new AccessError(WINDOWS_UNSUPPORTED);
  return process.getuid();
}

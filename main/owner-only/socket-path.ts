import { AccessError } from './platform.js';

/**
 * The longest Unix socket path, in bytes, that `bind` takes whole: `sun_path` is 108 bytes on
 * Linux and 104 on macOS and the BSDs, with a terminating NUL. A longer path is not refused by
 * Node: it binds a truncated one, somewhere else, with the default mode.
 */
export function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number {
  return platform === 'linux' || platform === 'android' ? 107 : 103;
}

export function socketPathFits(path: string, platform: NodeJS.Platform = process.platform): boolean {
  return Buffer.byteLength(path, 'utf8') <= maxSocketPathBytes(platform);
}

/** Refuses, before anything is created, a socket path `bind` would truncate. */
export function assertSocketPathFits(path: string, platform: NodeJS.Platform = process.platform): void {
  if (socketPathFits(path, platform)) return;
  throw new AccessError(
    `the socket path ${path} is ${Buffer.byteLength(path, 'utf8')} bytes; a Unix socket path can be at most ` +
      `${maxSocketPathBytes(platform)} bytes on ${platformName(platform)}: choose a shorter runtime directory`,
  );
}

function platformName(platform: NodeJS.Platform): string {
  return platform === 'darwin' ? 'macOS' : platform === 'linux' ? 'Linux' : platform;
}

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, openSync, rmSync, writeSync, constants } from 'node:fs';

/** 32 random bytes as 64 lowercase hex characters. */
export function newLaunchToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * Writes the token raw (no newline) to a file created fresh with mode 0600. A leftover file from
 * an earlier launch is removed first; `O_EXCL` then guarantees the file we write is the one we made.
 */
export function writeTokenFile(path: string, token: string): void {
  rmSync(path, { force: true });
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    writeSync(fd, token);
  } finally {
    closeSync(fd);
  }
}

let expectedText: string | undefined;
let expectedBytes = Buffer.alloc(0);

/** Constant-time comparison of a presented token with the launch token. */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = Buffer.from(presented, 'utf8');
  // The launch token is the same on every request: its bytes are made once.
  if (expected !== expectedText) {
    expectedText = expected;
    expectedBytes = Buffer.from(expected, 'utf8');
  }
  const b = expectedBytes;
  // Compare against itself when lengths differ so the time does not depend on where they differ.
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

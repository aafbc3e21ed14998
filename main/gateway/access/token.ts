import { randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, openSync, rmSync, writeSync, constants } from 'node:fs';
import { readRegularFileSync } from '../../owner-only/index.js';

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

/** The most a token file may hold: a gateway writes 64 hex characters. */
export const MAX_TOKEN_FILE_BYTES = 4096;

/** What a token is made of: visible ASCII only (a line break in it would be a second header line). */
const TOKEN_TEXT = /^[\x21-\x7e]+$/;

/** A token file read: its token, or what is wrong with it (`missing`: nothing at the path, no gateway or one stopping). */
export type TokenFileRead = { readonly ok: true; readonly token: string } | { readonly ok: false; readonly missing: boolean; readonly problem: string };

/**
 * The one reader of a launch token file: the stdio bridge, an LLM worker and a stopping gateway
 * (asking whether the file still holds its own token) all read it here, so none can drift. Read as
 * `writeTokenFile` writes it: a regular file, not a link, opened once without blocking and bounded
 * (a fifo there held the reader until someone wrote to it, a file of gigabytes was read whole), and
 * refused unless it is visible ASCII (a trailing newline, an editor's, taken off). `problem` is the
 * rest of a sentence about the file: "is a symbolic link", "is over 4096 bytes".
 */
export function readTokenFile(path: string): TokenFileRead {
  const read = readRegularFileSync(path, { maxBytes: MAX_TOKEN_FILE_BYTES });
  if (!read.ok) return { ok: false, missing: read.why === 'missing', problem: read.message.replace(/^it /, '') };
  const token = read.bytes.toString('utf8').trim();
  if (token === '') return { ok: false, missing: false, problem: 'is empty' };
  if (!TOKEN_TEXT.test(token)) return { ok: false, missing: false, problem: 'does not hold a launch token (it has characters other than visible ASCII)' };
  return { ok: true, token };
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

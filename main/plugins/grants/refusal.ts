import { PluginLoadError } from '../errors.js';
import { describeAsks } from './asks.js';
import { shortDigest } from './digest.js';
import type { CapabilityAsk } from './types.js';

/** A module not served because what it asks for is not granted (yet): listed by `registry.pending()` as `'ungranted'`. */
export class PluginGrantError extends PluginLoadError {
  constructor(
    message: string,
    /** The asks not granted. */
    readonly missing: readonly CapabilityAsk[],
  ) {
    super(message);
  }
}

/**
 * Why the grant is missing: a request waits at the desk, no one is asked (`mode: 'deny'`), a
 * person denied it, or took it out of the grants file while it was served, or the grants file it
 * was served on can no longer be read (`unreadable`: fail closed); or it was not put to
 * the desk: it was put there `count` times in this run without a grant (`asked-enough`), or
 * `count` other requests wait there (`desk-full`).
 */
export type UngrantedWhy = 'asking' | 'not-asked' | 'denied' | 'withdrawn' | 'unreadable' | 'asked-enough' | 'desk-full';

/** `chatty-gateway plugin grant NAME`: how to grant module `name` when nothing says where it is served from (`GrantsOptions.grantCommand`'s default). */
export function plainGrantCommand(name: string): string {
  return `chatty-gateway plugin grant ${name}`;
}

/**
 * The one-line reason `GET /`, the log and the load error give: the missing grants, the component
 * they would be pinned to, and how to give them (`command`: `GrantsOptions.grantCommand`'s line).
 */
export function ungrantedReason(name: string, digest: string, missing: readonly CapabilityAsk[], why: UngrantedWhy, command: string, count = 0): string {
  const what = `${describeAsks(missing)} for component ${shortDigest(digest)}`;
  const how = `\`${command}\``;
  if (why === 'asked-enough') return `not asked again: it asks for ${what}, and was put to the desk ${count} times in this run without being granted; to grant it: ${how} (served once the grants file has it)`;
  if (why === 'desk-full') return `not asked: ${count} other plugins' requests wait for an answer; it asks for ${what}; to grant it: ${how} (served once the grants file has it)`;
  if (why === 'asking') return `waiting for a grant: it asks for ${what}; answer the request, or grant it with ${how}`;
  if (why === 'withdrawn') return `not granted: its grant of ${what} was withdrawn from the grants file; to grant it: ${how} (served once the grants file has it)`;
  if (why === 'unreadable') return `not granted: the grants file can no longer be read, so its grant of ${what} is not held; served again once the file reads and grants it (repair it, or remove it and grant with ${how})`;
  if (why === 'denied') return `not granted: its request for ${what} was denied; to grant it: ${how} (served once the grants file has it)`;
  return `not granted: it asks for ${what}, and no one is asked (approvals: deny, or no one to ask); to grant it: ${how} (served once the grants file has it)`;
}

import { z } from 'zod';
import { DIGEST_PATTERN } from './digest.js';
import { GRANTED_CAPABILITIES } from './types.js';

/** One ask as it is granted: the capability and the very detail a person saw. */
export const GrantedAsk = z.strictObject({
  capability: z.enum(GRANTED_CAPABILITIES),
  detail: z.string().min(1).max(1024),
});

export const Digest = z.string().regex(DIGEST_PATTERN, { message: 'must be "sha256:" and 64 lowercase hex digits' });

const pluginName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'must be a module name' });

/** A grant remembered in the grants file: plugin `name`'s component `digest` may have `granted`. */
export const RememberedGrant = z.strictObject({
  name: pluginName,
  digest: Digest,
  granted: z.array(GrantedAsk),
  /** When it was granted (ISO 8601), for a person reading the file. */
  at: z.string(),
});
export type RememberedGrant = z.infer<typeof RememberedGrant>;

/**
 * A `plugins.lock` entry: plugin `name` pinned to its component's `digest`, or (for a plugin built
 * at first use whose build is not reproducible) to `sources`, the digest of the source tree the
 * build was made from (`sourcesDigest`), pre-granted `granted`.
 */
export const LockedGrant = z
  .strictObject({ name: pluginName, digest: Digest.optional(), sources: Digest.optional(), granted: z.array(GrantedAsk) })
  .refine((entry) => (entry.digest === undefined) !== (entry.sources === undefined), { message: 'give exactly one of "digest" and "sources"' });
export type LockedGrant = z.infer<typeof LockedGrant>;

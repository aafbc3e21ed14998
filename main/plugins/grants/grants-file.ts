import { dirname, join } from 'node:path';
import { z } from 'zod';
import { OwnerOnlyJsonFile, repeatedValue } from '../../owner-only/index.js';
import { sameAsk } from './asks.js';
import { RememberedGrant } from './record.js';
import type { CapabilityAsk } from './types.js';

/** `{ "version": 1, "grants": [...] }`: one entry per plugin name, pinned to the digest last granted. */
const GrantsFileShape = z.strictObject({ version: z.literal(1), grants: z.array(RememberedGrant) });
type GrantsFileShape = z.infer<typeof GrantsFileShape>;

/** A grants file that cannot be read as one: it is left as it is, and nothing is written over it. */
export class GrantsFileError extends Error {
  override readonly name = 'GrantsFileError';
}

/** The grants file kept beside an approval rules file: `<its folder>/plugin-grants.json`. */
export function grantsFileBeside(rulesFile: string): string {
  return join(dirname(rulesFile), 'plugin-grants.json');
}

/**
 * The grants a person gave, on disk (an owner-only JSON file: 0600, zod-validated on every read,
 * written atomically, refused and never overwritten when malformed). One entry per plugin: a grant
 * for a new digest replaces the one for the old digest, so a plugin changed back is asked again.
 */
export class GrantsFile {
  private readonly file: OwnerOnlyJsonFile<GrantsFileShape>;

  constructor(readonly path: string) {
    this.file = new OwnerOnlyJsonFile(path, {
      label: 'grants file',
      contents: 'grants',
      kind: 'a plugin grants file',
      schema: GrantsFileShape,
      check: (shape) => repeatedValue(shape.grants.map((grant) => grant.name), 'plugin'),
      refuse: (message) => new GrantsFileError(message),
    });
  }

  /** Every remembered grant; throws `GrantsFileError` naming the file when it is malformed. */
  read(): RememberedGrant[] {
    return this.file.read()?.grants ?? [];
  }

  /** What plugin `name` was granted for component `digest` (nothing when its entry is for another digest). */
  grantedTo(name: string, digest: string): CapabilityAsk[] {
    const entry = this.read().find((grant) => grant.name === name);
    return entry && entry.digest === digest ? entry.granted : [];
  }

  /** Remembers `asks` for `name` at `digest`, beside what that digest already had (another digest's grant is dropped). */
  remember(name: string, digest: string, asks: readonly CapabilityAsk[], at = new Date()): void {
    this.file.update((current) => {
      const grants = current?.grants ?? [];
      const before = grants.find((grant) => grant.name === name && grant.digest === digest)?.granted ?? [];
      const granted = [...before, ...asks.filter((ask) => !before.some((had) => sameAsk(had, ask)))].map((ask) => ({ capability: ask.capability, detail: ask.detail }));
      const others = grants.filter((grant) => grant.name !== name);
      return { version: 1, grants: [...others, { name, digest, granted, at: at.toISOString() }].sort((a, b) => (a.name < b.name ? -1 : 1)) };
    });
  }
}

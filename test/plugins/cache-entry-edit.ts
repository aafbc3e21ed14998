/**
 * Writes `text` as file `name` of a transpile cache entry and records its SHA-256 in the entry's
 * meta.json, as the cache would have: the hash check then passes, so what a test shows refused is
 * refused by the check after it (jco's JavaScript check), not by the hash.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function rewriteCachedFile(entry: string, name: string, text: string): void {
  writeFileSync(join(entry, name), text);
  const metaPath = join(entry, 'meta.json');
  const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as { sha256: Record<string, string> };
  meta.sha256[name] = createHash('sha256').update(text).digest('hex');
  writeFileSync(metaPath, JSON.stringify(meta));
}

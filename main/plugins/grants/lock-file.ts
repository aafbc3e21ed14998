import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { LockedGrant } from './record.js';

/** `plugins.lock`: `{ "version": 1, "plugins": [{ "name", "digest" | "sources", "granted": [...] }] }`. */
const PluginsLockShape = z.strictObject({ version: z.literal(1), plugins: z.array(LockedGrant) });

/** A `plugins.lock` that cannot be read as one: nothing of it is granted, and the registry is not made. */
export class PluginsLockError extends Error {
  override readonly name = 'PluginsLockError';
}

/**
 * Reads a `plugins.lock` an embedder ships: its entries pre-grant what they list to the plugin
 * they name, pinned to its component's digest (or the digest of its sources). It is the
 * embedder's file, shipped read-only with the application: read once, never written.
 */
export function readPluginsLock(path: string): LockedGrant[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new PluginsLockError(`plugins.lock ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PluginsLockError(`plugins.lock ${path} is not valid JSON (${(err as Error).message})`);
  }
  const parsed = PluginsLockShape.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
    throw new PluginsLockError(`plugins.lock ${path} is not a lock file${where}: ${first?.message ?? 'invalid'}`);
  }
  return parsed.data.plugins;
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../plugins/world.js';

/** The package's version, read from its package.json (the same file in a clone and an install). */
export function packageVersion(): string {
  const json = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof json.version === 'string' ? json.version : 'unknown';
}

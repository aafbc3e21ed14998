import { createHash } from 'node:crypto';

/** OpenAI's rule for a function name. */
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NAME = 64;

/**
 * The function name of a plugin tool: `<module>__<tool>` (the fabric's own tools have no `__`, so
 * the two never collide), each character outside `[A-Za-z0-9_-]` made `_`. A name that is too
 * long, or already `taken` by another tool, ends with 8 hex characters of the original's hash.
 */
export function pluginToolName(module: string, tool: string, taken: ReadonlySet<string>): string {
  const plain = `${safe(module)}__${safe(tool)}`;
  if (plain.length <= MAX_NAME && !taken.has(plain)) return plain;
  const hash = createHash('sha256').update(`${module}\0${tool}`).digest('hex');
  for (let start = 0; start + 8 <= hash.length; start++) {
    const suffix = `_${hash.slice(start, start + 8)}`;
    const name = `${plain.slice(0, MAX_NAME - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
  throw new Error(`no free function name for ${module}/${tool}`);
}

function safe(part: string): string {
  const cleaned = part.replace(/[^A-Za-z0-9_-]/g, '_');
  return cleaned === '' ? '_' : cleaned;
}

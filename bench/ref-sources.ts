/**
 * The sources of a before/after pair's "before" side: `main/` as it was at REF, or today's
 * `main/` with only `paths` taken from REF (so other uncommitted work in the checkout is on both
 * sides of the pair). Shared by `bench/mcp.ts` and `bench/broker.ts` (`--against`).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Writes REF's sources (see above) under `src/main/`; `root` is this checkout. */
export function extractRefSources(root: string, ref: string, paths: readonly string[], src: string): void {
  mkdirSync(src, { recursive: true });
  if (paths.length > 0) cpSync(join(root, 'main'), join(src, 'main'), { recursive: true });
  const archive = execFileSync('git', ['-C', root, 'archive', '--format=tar', ref, ...(paths.length > 0 ? paths : ['main'])], { maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', src], { input: archive });
}

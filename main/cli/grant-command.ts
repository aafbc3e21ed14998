import { resolve } from 'node:path';
import { shellWord } from './shell-word.js';

/** Where a running `serve` keeps its plugins and its grants: what `plugin grant` must be told to reach the same. */
export interface GrantTarget {
  /** `serve --modules-dir`, if given (else the bundled examples, `plugin grant`'s default too). */
  modulesDir?: string | undefined;
  /** `serve --approvals-file`, if given (else the default, `plugin grant`'s default too). */
  approvalsFile?: string | undefined;
}

/**
 * The `chatty-gateway plugin grant NAME` line a refusal tells a person to type: with the
 * `--modules-dir` and `--approvals-file` this `serve` was given, as absolute paths, because
 * without them the command looks in the bundled examples and writes the default grants file, and
 * the person types it in another terminal, often in another folder.
 */
export function grantCommand(name: string, target: GrantTarget): string {
  const words = ['chatty-gateway', 'plugin', 'grant', name];
  if (target.modulesDir !== undefined) words.push('--modules-dir', resolve(target.modulesDir));
  if (target.approvalsFile !== undefined) words.push('--approvals-file', resolve(target.approvalsFile));
  return words.map(shellWord).join(' ');
}

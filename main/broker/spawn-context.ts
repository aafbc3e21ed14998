import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, sep } from 'node:path';
import { CallError } from '../fabric/admission/index.js';
import { SpawnContext } from '../fabric/wire/payloads.js';
import { wireError } from '../fabric/wire/wire-error.js';

/**
 * A callee's spawn context (docs/broker.md "Spawn context"): derived from the caller's when the call brings none, else the requested one checked
 * against the caller's and the target's, and refused with `spawn_context_refused {field, reason}`
 * when it would widen anything. Paths are compared as canonical real paths.
 */

/** The root's settings for one agent: what its callee contexts carry. */
export interface AgentSettings {
  verification?: string | undefined;
  endpoint?: string | undefined;
}

/** The wire's field names, in the order a requested context is checked. */
type Field = 'workspace_root' | 'base_branch' | 'roster' | 'verification' | 'endpoint';
const FIELDS: readonly string[] = ['workspace_root', 'base_branch', 'roster', 'verification', 'endpoint'] satisfies Field[];

/** Builds a context with only the fields that are set (and a roster of its own). */
function context(fields: {
  workspace_root?: string | undefined;
  base_branch?: string | undefined;
  roster: readonly string[];
  verification?: string | undefined;
  endpoint?: string | undefined;
}): SpawnContext {
  // A roster is a set of names: one named a million times is kept once.
  const out: SpawnContext = { roster: [...new Set(fields.roster)] };
  if (fields.workspace_root !== undefined) out.workspace_root = fields.workspace_root;
  if (fields.base_branch !== undefined) out.base_branch = fields.base_branch;
  if (fields.verification !== undefined) out.verification = fields.verification;
  if (fields.endpoint !== undefined) out.endpoint = fields.endpoint;
  return out;
}

/** The context a callee gets when the call brings none. */
export function deriveSpawnContext(caller: SpawnContext, target: AgentSettings): SpawnContext {
  return context({
    workspace_root: caller.workspace_root,
    base_branch: caller.base_branch,
    roster: caller.roster,
    verification: target.verification,
    endpoint: target.endpoint,
  });
}

/** `field` is the wire field's name (a shape error in an unparsed context may name an unknown key). */
function refuse(field: string, reason: string): never {
  throw new CallError(wireError({ kind: 'spawn_context_refused', field, reason }));
}

/** A value as it appears in a reason: JSON-quoted, so no text inside it can pass for ours. */
const q = (value: string): string => JSON.stringify(value);

/** A path as given, plus where it really leads when that differs. */
const shown = (given: string, real: string): string => (given === real ? q(given) : `${q(given)} (really ${q(real)})`);

/**
 * The canonical real path of a requested or the caller's workspace root, or the reason it has none.
 * `fs.promises.realpath` is the native realpath(3): it resolves every symlink and `..` against the
 * file system as it is (`tree/missing/../sub` does not exist), never lexically.
 */
async function realDirectory(path: string): Promise<{ real: string } | { problem: string }> {
  if (path.includes('\0')) return { problem: `${q(path)} contains a NUL byte` };
  if (!isAbsolute(path)) return { problem: `${q(path)} is relative: a workspace root must be an absolute path` };
  let real: string;
  try {
    real = await realpath(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { problem: `${q(path)} does not exist` };
    return { problem: `${q(path)} cannot be resolved (${code ?? (err as Error).message})` };
  }
  try {
    if (!(await stat(real)).isDirectory()) return { problem: `${shown(path, real)} is not a directory` };
  } catch (err) {
    return { problem: `${shown(path, real)} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  return { real };
}

/** Whether `real` is `root` or under it; both canonical. A prefix alone (`/w/tree-evil` vs `/w/tree`) is not. */
export function isInside(real: string, root: string): boolean {
  if (real === root) return true;
  return real.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** The requested workspace root, canonical, or a refusal. */
async function checkWorkspaceRoot(requested: string | undefined, caller: string | undefined): Promise<string | undefined> {
  if (requested === undefined && caller === undefined) return undefined;
  if (caller === undefined) return refuse('workspace_root', `${q(requested ?? '')} is requested; the caller has no workspace`);
  if (requested === undefined) return refuse('workspace_root', `none is requested; the caller's workspace is ${q(caller)}`);
  const root = await realDirectory(caller);
  if ('problem' in root) return refuse('workspace_root', `the caller's workspace ${root.problem}`);
  const wanted = await realDirectory(requested);
  if ('problem' in wanted) return refuse('workspace_root', wanted.problem);
  if (!isInside(wanted.real, root.real)) {
    return refuse('workspace_root', `${shown(requested, wanted.real)} is not inside the caller's workspace ${shown(caller, root.real)}`);
  }
  return wanted.real;
}

/** Refuses `requested` unless it equals `expected` (both may be absent); `whose` is `caller` or `target`. */
function checkSame(field: Field, requested: string | undefined, expected: string | undefined, whose: 'caller' | 'target'): void {
  if (requested === expected) return;
  if (requested === undefined) refuse(field, `none is requested; the ${whose}'s is ${q(expected ?? '')}`);
  if (expected === undefined) refuse(field, `${q(requested)} is requested; the ${whose} has none`);
  refuse(field, `${q(requested)} differs from the ${whose}'s ${q(expected)}`);
}

/** Parses what the call brought (the root's transport hands it over unchecked); a shape error is refused by field. */
function parseRequested(requested: SpawnContext): SpawnContext {
  const parsed = SpawnContext.safeParse(requested);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue === undefined) return refuse('spawn_context', 'not a spawn context');
  if (issue.code === 'unrecognized_keys') return refuse(issue.keys[0] ?? 'spawn_context', 'not a spawn context field');
  const top = issue.path[0];
  const field = typeof top === 'string' && FIELDS.includes(top) ? top : 'spawn_context';
  return refuse(field, issue.message);
}

/**
 * A requested context checked against the caller's and the target's; throws
 * CallError(spawn_context_refused). Fields are checked in wire order and the first that fails is
 * the refusal. Async: it resolves real paths.
 */
export async function checkSpawnContext(requested: SpawnContext, caller: SpawnContext, target: AgentSettings): Promise<SpawnContext> {
  const wanted = parseRequested(requested);
  const workspaceRoot = await checkWorkspaceRoot(wanted.workspace_root, caller.workspace_root);
  checkSame('base_branch', wanted.base_branch, caller.base_branch, 'caller');
  const allowed = new Set(caller.roster);
  const strangers = [...new Set(wanted.roster.filter((name) => !allowed.has(name)))];
  if (strangers.length > 0) refuse('roster', `not on the caller's roster: ${strangers.join(', ')}`);
  checkSame('verification', wanted.verification, target.verification, 'target');
  checkSame('endpoint', wanted.endpoint, target.endpoint, 'target');
  return context({ ...wanted, workspace_root: workspaceRoot });
}

/** The callee's context: derived when `requested` is undefined, else checked. */
export async function calleeSpawnContext(
  requested: SpawnContext | undefined,
  caller: SpawnContext,
  target: AgentSettings,
): Promise<SpawnContext> {
  return requested === undefined ? deriveSpawnContext(caller, target) : checkSpawnContext(requested, caller, target);
}

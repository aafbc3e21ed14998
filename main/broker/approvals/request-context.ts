import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { hasHidden } from '../../display/index.js';
import { dangerReading, type CommandRun } from './danger.js';
import type { ConfigPlaces } from './gateway-config.js';
import { fromHome } from './home-path.js';
import { coversLanding, namesEveryTag, proposals } from './match.js';
import { asWritten, landing, placePath } from './sensitive-paths.js';
import type { ApprovalMatch, DangerTag } from './types.js';

/**
 * What the gateway vouches for about one approval, from its own records and its own reading of the
 * request (never the worker's word). The broker's `ApprovalRequest` and the bridge's
 * `PendingApproval` carry these fields as they are written here.
 */
export interface VouchedContext {
  /** The root task the asker works under (absent for a participant acting as itself). */
  task?: string;
  /** The asker's workspace directory (a real path). */
  workspace?: string;
  /** A write's path: absolute, resolved lexically against the workspace (links not followed). */
  path?: string;
  /** A write's path through the links on it, where the kernel writes, when that is another path than `path` (`docs -> ~/x` makes `docs/a` land in `~/x/a`). */
  lands?: string;
  /** A write's path lies outside the workspace. */
  outside?: boolean;
  /** The command, path or diff stat holds characters a reader could not see (the display rule): never remembered. */
  hidden: boolean;
  /** What the gateway finds dangerous in it; a tagged request's default is Deny. */
  danger: DangerTag[];
  /**
   * Those of `danger` set only because the gateway could not read where the line reaches (`echo []
   * > $OUT`: a variable, a folder it cannot place, a file's name in an interpreter's code): it MAY
   * reach there, and the person is told so, not that it does. Absent when there are none.
   */
  unsure?: DangerTag[];
  /**
   * The command lines the line's options and wrappers run, as the gateway read them for their tags
   * (`tar --to-command='curl … | sh'`: tar, `curl … | sh`): named to the person on lines of their
   * own (at most `MAX_RUNS_NAMED`). Absent when there are none.
   */
  runs?: CommandRun[];
  /** How many more such command lines run than `runs` names (past `MAX_RUNS_NAMED`): said to the person. Absent when none. */
  runsMore?: number;
  /** The matches offered for "for this task" and "always", the exact one first; none for a hidden request. */
  proposals: ApprovalMatch[];
}

/**
 * The context of `kind`/`commandOrPath` asked by a node working in `workspace` (its spawn
 * context's, as the broker recorded it) under root task `task` (undefined when it works under
 * none): nothing here comes from the worker's word but the request itself. `config`: the
 * gateway's own files (its rules, grants, locks, audit log), tagged `gateway-config` when reached.
 */
export function vouchedContext(kind: 'exec' | 'write', commandOrPath: string, diffStat: string | undefined, workspace: string | undefined, task: string | undefined, config?: ConfigPlaces): VouchedContext {
  const real = workspace === undefined ? undefined : realPath(workspace);
  const placed = kind === 'write' ? placePath(commandOrPath, real) : {};
  // The kernel follows the links on a written path (`hooks -> .git/hooks`, `out -> ~`): the
  // request carries the tags of where it lands too. The path shown stays the one asked for.
  const { tags: danger, unsure, runs, runsMore } = dangerReading(kind, commandOrPath, real, diffStat, { followLinks: true, config });
  const outside = placed.outside === undefined ? undefined : placed.outside || danger.includes('outside-workspace');
  // Where it lands, said beside the path asked for (not read again when it could not be read: unread-landing).
  // A home spelling (`~/x`, `$HOME/x`) too: it has no `path` (outside any workspace), but it lands somewhere all the same.
  const written = kind === 'write' && !danger.includes('unread-landing') ? asWritten(commandOrPath, real) : undefined;
  const asked = placed.path ?? (written !== undefined ? homeAsked(commandOrPath) : undefined);
  const landed = written !== undefined ? landing(written) : undefined;
  const lands = landed !== asked ? landed : undefined;
  // Shown with code points (and never remembered) when any of what is shown hides a character.
  // What a rule is matched against: where it lands too, when a link takes it elsewhere (`coversLanding`).
  const subject = { kind, command_or_path: commandOrPath, workspace: real, path: placed.path, lands };
  const hidden = hasHidden(commandOrPath) || (diffStat !== undefined && hasHidden(diffStat)) || (lands !== undefined && hasHidden(lands));
  return {
    ...(task !== undefined ? { task } : {}),
    ...(real !== undefined ? { workspace: real } : {}),
    ...(placed.path !== undefined ? { path: placed.path } : {}),
    ...(lands !== undefined ? { lands } : {}),
    ...(outside !== undefined ? { outside } : {}),
    hidden,
    danger,
    ...(unsure.length > 0 ? { unsure } : {}),
    ...(runs.length > 0 ? { runs } : {}),
    ...(runsMore > 0 ? { runsMore } : {}),
    // Only what a rule could keep: a match that names every danger tag of the request (`rm *` does not name `rm -rf build`'s) and covers where it lands.
    // None when where it lands was not read: no rule would approve it (rules.ts), so none is offered to remember.
    proposals: hidden || danger.includes('unread-landing') ? [] : proposals(subject).filter((match) => namesEveryTag(match, kind, real, danger) && coversLanding(match, subject)),
  };
}

/** A home spelling's path with its home folder's links followed (`/home -> /usr/home`): where it lands when nothing below the home is a link. */
function homeAsked(target: string): string | undefined {
  const home = fromHome(target);
  if (home === undefined) return undefined;
  const slash = target.indexOf('/');
  const root = fromHome(slash < 0 ? target : target.slice(0, slash));
  return root === undefined ? home : resolve(realPath(root), slash < 0 ? '.' : `.${target.slice(slash)}`);
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // gone since it was checked: shown as recorded
  }
}

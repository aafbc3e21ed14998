import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { hasHidden } from '../../display/index.js';
import { dangerTags } from './danger.js';
import { proposals } from './match.js';
import { pathTags, placePath } from './sensitive-paths.js';
import { DANGER_TAGS, type ApprovalMatch, type DangerTag } from './types.js';

/** What the gateway vouches for about one approval, from its own records and its own reading of the request. */
export interface VouchedContext {
  task?: string;
  workspace?: string;
  path?: string;
  outside?: boolean;
  hidden: boolean;
  danger: DangerTag[];
  proposals: ApprovalMatch[];
}

/**
 * The context of `kind`/`commandOrPath` asked by a node working in `workspace` (its spawn
 * context's, as the broker recorded it) under root task `task` (undefined when it works under
 * none): nothing here comes from the worker's word but the request itself.
 */
export function vouchedContext(kind: 'exec' | 'write', commandOrPath: string, diffStat: string | undefined, workspace: string | undefined, task: string | undefined): VouchedContext {
  const real = workspace === undefined ? undefined : realPath(workspace);
  const placed = kind === 'write' ? placePath(commandOrPath, real) : {};
  const hidden = hasHidden(commandOrPath) || (diffStat !== undefined && hasHidden(diffStat));
  let danger = dangerTags(kind, commandOrPath, real, diffStat);
  let outside = placed.outside;
  if (placed.path !== undefined) {
    // The kernel follows the links on the path (`hooks -> .git/hooks`, `out -> ~`): the write
    // carries the tags of where it lands too. The path shown stays the one asked for.
    const lands = landing(placed.path);
    if (lands !== placed.path) {
      const more = pathTags(lands, real);
      danger = DANGER_TAGS.filter((tag) => danger.includes(tag) || more.includes(tag));
      if (more.includes('outside-workspace')) outside = true;
    }
  }
  return {
    ...(task !== undefined ? { task } : {}),
    ...(real !== undefined ? { workspace: real } : {}),
    ...(placed.path !== undefined ? { path: placed.path } : {}),
    ...(outside !== undefined ? { outside } : {}),
    hidden,
    danger,
    proposals: hidden ? [] : proposals({ kind, command_or_path: commandOrPath, workspace: real, path: placed.path }),
  };
}

/** Where a write to `path` lands: the real path of its deepest part that exists, the rest joined on. */
function landing(path: string): string {
  const rest: string[] = [];
  for (let at = path; ; at = dirname(at)) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      if (dirname(at) === at) return path;
      rest.push(basename(at));
    }
  }
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // gone since it was checked: shown as recorded
  }
}

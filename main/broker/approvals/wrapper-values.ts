/**
 * Where the command starts for wrappers the danger reading does not look through but whose
 * options take more than one value, or a value and then a word of their own: `bwrap --bind / /
 * rm -rf ~`, `tmux new -s x rm -rf ~`, `chroot --userspec u:g / rm -rf /home`. Read from its first
 * word that is no option (and the next), such a line hid the command from the tags (runs-command
 * only). Each is read here as its own parser reads it.
 */
import { ownEntry } from './own-entry.js';

/** bwrap's options and how many words each takes (it takes no shortening; an unknown one is refused). */
const BWRAP_VALUES: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    ['--args', '--argv0', '--userns', '--userns2', '--pidns', '--uid', '--gid', '--hostname', '--chdir', '--unsetenv', '--lock-file', '--sync-fd', '--remount-ro', '--exec-label', '--file-label', '--proc', '--dev', '--tmpfs', '--mqueue', '--dir', '--seccomp', '--add-seccomp-fd', '--block-fd', '--userns-block-fd', '--info-fd', '--json-status-fd', '--cap-add', '--cap-drop', '--perms', '--size', '--overlay-src', '--tmp-overlay', '--ro-overlay'].map((name) => [name, 1]),
  ),
  ...Object.fromEntries(
    ['--setenv', '--bind', '--bind-try', '--dev-bind', '--dev-bind-try', '--ro-bind', '--ro-bind-try', '--file', '--bind-data', '--ro-bind-data', '--symlink', '--chmod', '--bind-fd', '--ro-bind-fd'].map((name) => [name, 2]),
  ),
  '--overlay': 3,
};

/** tmux's own options that take a value (`-c` runs its value as a shell line), then each command's that run one: their value letters. */
const TMUX_VALUES = 'cfLST';
const TMUX_COMMANDS: Readonly<Record<string, string>> = {
  'new-session': 'cefFnstxy', new: 'cefFnstxy',
  'new-window': 'ceFnt', neww: 'ceFnt',
  'split-window': 'celpFt', splitw: 'celpFt',
  'respawn-pane': 'cet', respawnp: 'cet',
  'respawn-window': 'cet', respawnw: 'cet',
  'run-shell': 'cdt', run: 'cdt',
};

/** What a wrapper's words run, as its parser reads them: where the command starts, and lines given whole (`tmux -c '…'`). */
export interface WrapperCommand {
  start?: number;
  lines: string[];
}

/** The command of `bwrap`, `tmux` or `chroot` given `args` (their words after the program), or undefined for any other program. */
export function wrapperCommand(program: string, args: readonly string[]): WrapperCommand | undefined {
  if (program === 'bwrap') return bwrapCommand(args);
  if (program === 'chroot') return chrootCommand(args);
  if (program === 'tmux') return tmuxCommand(args);
  return undefined;
}

function bwrapCommand(args: readonly string[]): WrapperCommand {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) {
    if (args[i] === '--') return { start: i + 1, lines: [] };
    i += 1 + (ownEntry(BWRAP_VALUES, args[i]!) ?? 0);
  }
  return { start: i, lines: [] };
}

/** `chroot [--userspec U:G] [--groups G] [--skip-chdir] NEWROOT [COMMAND…]`: long options by any shortening (getopt_long). */
function chrootCommand(args: readonly string[]): WrapperCommand {
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    const name = arg.split('=', 1)[0]!;
    const takesValue = name.length >= 3 && ['--userspec', '--groups'].some((long) => long.startsWith(name));
    if (takesValue && !arg.includes('=')) i++;
  }
  return { start: i + 1, lines: [] }; // NEWROOT, then the command
}

/**
 * `tmux [options] command [flags] [shell-command…]`: options and flags as tmux's getopt reads them
 * (clusters, a value glued or the next word), for the commands that run one (`new`, `neww`,
 * `splitw`, `respawnp`, `respawnw`, `run`). `-c` before the command is a line of its own.
 */
function tmuxCommand(args: readonly string[]): WrapperCommand {
  const lines: string[] = [];
  let i = skipFlags(args, 0, TMUX_VALUES, (letter, value) => {
    if (letter === 'c') lines.push(value);
  });
  const letters = tmuxFlags(args[i]);
  if (letters === undefined) return { lines };
  i = skipFlags(args, i + 1, letters, () => {});
  return { start: i, lines };
}

/**
 * The value letters of the tmux command `name`, one of those that run a command: by its name or
 * alias, or, as tmux finds a command, by a prefix of its name (`new-sess`, `new-w`, `split`,
 * `respawn-w`, `run-s`). Read by the table's keys only, `tmux new-sess -s x rm -rf ~` hid rm behind
 * `-s x` (runs-command only). A prefix several names share is refused by tmux: read as any of them.
 */
function tmuxFlags(name: string | undefined): string | undefined {
  if (name === undefined || name === '' || name.startsWith('-')) return undefined;
  return ownEntry(TMUX_COMMANDS, name) ?? Object.entries(TMUX_COMMANDS).find(([command]) => command.includes('-') && command.startsWith(name))?.[1];
}

/** Past getopt-style flags from `from` (`-dP`, `-s x`, `-sx`, `--`), each value given to `found`: the index of the first word after them. */
function skipFlags(args: readonly string[], from: number, values: string, found: (letter: string, value: string) => void): number {
  let i = from;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return i + 1;
    if (!arg.startsWith('-') || arg === '-') return i;
    for (let k = 1; k < arg.length; k++) {
      if (!values.includes(arg[k]!)) continue;
      const value = k + 1 < arg.length ? arg.slice(k + 1) : args[++i];
      if (value !== undefined) found(arg[k]!, value);
      break;
    }
  }
  return i;
}

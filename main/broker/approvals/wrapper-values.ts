/**
 * Where the command starts for wrappers the danger reading does not look through but whose
 * options take more than one value, or a value and then a word of their own: `bwrap --bind / /
 * rm -rf ~`, `tmux new -s x rm -rf ~`, `chroot --userspec u:g / rm -rf /home`, `unshare
 * --propagation private --setgroups deny rm -rf ~`. Read from its first word that is no option
 * (and the next), such a line hid the command from the tags (runs-command only). Each is read
 * here as its own parser reads it.
 */
import { shellWord } from './env-split.js';
import { ownEntry } from './own-entry.js';
import { tmuxCommandUnread, tmuxFormat, tmuxParsedUnread, tmuxStringLines } from './tmux-unread.js';

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

/**
 * Wrappers read by getopt_long with `+` (options first, the command at the first word that is
 * none): their short letters and long names that take a value as the next word when not glued.
 * Options whose value is optional take it glued only (`nsenter -m/x`, `unshare --mount=x`), so
 * they are none of these. util-linux 2.38's unshare and nsenter, systemd 252's systemd-run.
 */
const GETOPT_VALUES: Readonly<Record<string, GetoptValues>> = {
  unshare: { short: 'RwSG', optional: 'muinpUCT', long: ['--map-user', '--map-users', '--map-group', '--map-groups', '--propagation', '--setgroups', '--setuid', '--setgid', '--root', '--wd', '--monotonic', '--boottime'] },
  nsenter: { short: 'tSGW', optional: 'muinpCUTrw', long: ['--target', '--setuid', '--setgid', '--wdns'] },
  'systemd-run': {
    short: 'HMEpu',
    optional: '',
    long: [
      '--host', '--machine', '--unit', '--property', '--description', '--slice', '--uid', '--gid', '--nice', '--working-directory', '--setenv', '--service-type',
      '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--on-calendar', '--timer-property', '--path-property', '--socket-property',
    ],
  },
};

/** A getopt_long reader's options: short letters whose value is required (the cluster's rest or the next word) or optional (the rest only), long names whose value is required. */
interface GetoptValues {
  short: string;
  optional: string;
  long: readonly string[];
}

/** tmux's own options that take a value (`-c` runs its value as a shell line), then each command's that run one: their value letters. */
const TMUX_VALUES = 'cfLST';
const TMUX_COMMANDS: Readonly<Record<string, string>> = {
  'new-session': 'cefFnstxy', new: 'cefFnstxy',
  'new-window': 'ceFnt', neww: 'ceFnt',
  'split-window': 'celpFt', splitw: 'celpFt', 'split-pane': 'celpFt', splitp: 'celpFt',
  'respawn-pane': 'cet', respawnp: 'cet',
  'respawn-window': 'cet', respawnw: 'cet',
  'display-popup': 'bcdehsStTwxy', popup: 'bcdehsStTwxy',
  'run-shell': 'cdt', run: 'cdt',
  'if-shell': 't', if: 't',
  'pipe-pane': 't', pipep: 't',
};
/** tmux commands whose first word after their flags is a shell line (`run 'x'`, `if 'test …' …`, `pipep 'cat >x'`), not a command's words. */
const TMUX_LINE_FIRST = new Set(['run-shell', 'if-shell', 'pipe-pane']);

/** What a wrapper's words run, as its parser reads them: where the command starts, and lines given whole (`tmux -c '…'`). */
export interface WrapperCommand {
  start?: number;
  lines: string[];
  /** Something it runs is not read (tmux: `tmux-unread.ts`): the line is unread-landing. */
  unread?: boolean;
}

/** The command of `bwrap`, `tmux`, `chroot`, `unshare`, `nsenter` or `systemd-run` given `args` (their words after the program), or undefined for any other program. */
export function wrapperCommand(program: string, args: readonly string[]): WrapperCommand | undefined {
  if (program === 'bwrap') return bwrapCommand(args);
  if (program === 'chroot') return chrootCommand(args);
  if (program === 'tmux') return tmuxCommand(args);
  const getopt = ownEntry(GETOPT_VALUES, program);
  if (getopt !== undefined) return { start: getoptCommand(args, getopt), lines: [] };
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
 * Past getopt_long's options (`+`: up to the first word that is none, or past `--`): in a cluster,
 * a letter whose value is required takes the rest of the word or the next one, one whose value is
 * optional the rest only (`nsenter -Ut rm …`: `t` is -U's file, rm the command); a long name, by any
 * prefix (getopt_long takes an unambiguous one and refuses an ambiguous one, so reading that as
 * taking a value is harmless), the next word unless glued with `=`. The index of the command's first word.
 */
function getoptCommand(args: readonly string[], options: GetoptValues): number {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return i + 1;
    if (!arg.startsWith('-') || arg === '-') return i;
    if (arg.startsWith('--')) {
      if (!arg.includes('=') && options.long.some((name) => name.startsWith(arg))) i++;
      continue;
    }
    for (let k = 1; k < arg.length; k++) {
      if (options.optional.includes(arg[k]!)) break;
      if (!options.short.includes(arg[k]!)) continue;
      if (k === arg.length - 1) i++;
      break;
    }
  }
  return i;
}

/**
 * `tmux [options] command [flags] [arguments…] [; command …]`: options and flags as tmux's getopt
 * reads them (clusters, a value glued or the next word); `-c` before the command is a line of its
 * own. Commands are separated by a word ending in `;` (`\;` in bash; a word ending in `\;` keeps a
 * `;` of its own), each read: what `new`, `neww`, `splitw`, `respawnp`, `respawnw` and `popup` run
 * (their words, quoted again; one word is a shell line too), the shell line of `run`, `if` and
 * `pipep` (`run -C` and `if`'s commands are tmux commands: read as `tmux …` lines). Commands are
 * found by name, alias or a prefix of their name, as tmux finds them (`tmuxFlags`). Before, only
 * the first command was read: `tmux new -d true \; neww -n x rm -rf ~` hid rm.
 */
function tmuxCommand(args: readonly string[]): WrapperCommand {
  const lines: string[] = [];
  // What it runs that is not read (tmux-unread.ts): a format, a configuration file, a command run later.
  let unread = args.some(tmuxFormat);
  const from = skipFlags(
    args,
    0,
    TMUX_VALUES,
    (letter, value) => {
      if (letter === 'c') lines.push(value);
      if (letter === 'f' && value !== '/dev/null') unread = true;
    },
    // `-C`, control mode: tmux commands read from its input (`printf 'run …' | tmux -C attach`), not its words.
    (letter) => {
      if (letter === 'C') unread = true;
    },
  );
  for (const words of tmuxSequence(args.slice(from))) {
    if (tmuxCommandUnread(words[0])) unread = true;
    const command = tmuxName(words[0]);
    if (command === undefined) continue;
    let run = false; // run -C: its argument is a tmux command
    const start = skipFlags(words, 1, ownEntry(TMUX_COMMANDS, command)!, () => {}, (letter) => {
      if (letter === 'C') run = true;
    });
    const rest = words.slice(start);
    if (rest.length === 0) continue;
    if (TMUX_LINE_FIRST.has(command)) {
      // run -C's string and if-shell's commands, run after the line's answer: tmux commands, parsed by tmux.
      const parsed = [...(run ? [rest[0]!] : []), ...(command === 'if-shell' ? rest.slice(1, 3) : [])];
      if (!run) lines.push(rest[0]!);
      for (const text of parsed) {
        lines.push(...tmuxStringLines(text));
        if (tmuxParsedUnread(text)) unread = true;
      }
      continue;
    }
    lines.push(rest.map(shellWord).join(' '));
    if (rest.length === 1) lines.push(rest[0]!); // one word: tmux runs it with `sh -c`
  }
  return { lines, unread };
}

/** tmux's words split into commands at a word ending in `;` (not `\;`, which keeps a `;`), as tmux splits its arguments. */
function tmuxSequence(words: readonly string[]): string[][] {
  const commands: string[][] = [];
  let command: string[] = [];
  for (const word of words) {
    if (word.endsWith('\\;')) command.push(`${word.slice(0, -2)};`);
    else if (word.endsWith(';')) {
      if (word.length > 1) command.push(word.slice(0, -1));
      commands.push(command);
      command = [];
    } else command.push(word);
  }
  commands.push(command);
  return commands.filter((one) => one.length > 0);
}

/**
 * The full name of the tmux command `name` among those that run a line (`TMUX_COMMANDS`): by its
 * name or alias, or, as tmux finds a command, by a prefix of its full name (`new-sess`, `new-w`,
 * `split`, `respawn-w`, `run-s`). A prefix several names share is refused by tmux: read as any of them.
 */
function tmuxName(name: string | undefined): string | undefined {
  if (name === undefined || name === '' || name.startsWith('-')) return undefined;
  const found = ownEntry(TMUX_COMMANDS, name) !== undefined ? name : Object.keys(TMUX_COMMANDS).find((command) => command.includes('-') && command.startsWith(name));
  return found === undefined ? undefined : (TMUX_ALIASES[found] ?? found);
}

/** tmux's aliases of the commands above, by their full names. */
const TMUX_ALIASES: Readonly<Record<string, string>> = { new: 'new-session', neww: 'new-window', splitw: 'split-window', 'split-pane': 'split-window', splitp: 'split-window', respawnp: 'respawn-pane', respawnw: 'respawn-window', popup: 'display-popup', run: 'run-shell', if: 'if-shell', pipep: 'pipe-pane' };

/**
 * Past getopt-style flags from `from` (`-dP`, `-s x`, `-sx`, `--`), each value given to `found`
 * and each flag without one to `flag`: the index of the first word after them.
 */
function skipFlags(args: readonly string[], from: number, values: string, found: (letter: string, value: string) => void, flag: (letter: string) => void = () => {}): number {
  let i = from;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return i + 1;
    if (!arg.startsWith('-') || arg === '-') return i;
    for (let k = 1; k < arg.length; k++) {
      if (!values.includes(arg[k]!)) {
        flag(arg[k]!);
        continue;
      }
      const value = k + 1 < arg.length ? arg.slice(k + 1) : args[++i];
      if (value !== undefined) found(arg[k]!, value);
      break;
    }
  }
  return i;
}

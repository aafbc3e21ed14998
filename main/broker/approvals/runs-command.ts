/**
 * The one table of what runs a command the person may never see as one: programs that run the
 * command in their arguments (`nice make`, `xargs rm`, `ssh host cmd`), programs that run code
 * given inline (`python3 -c`, `awk 'BEGIN{system(…)}'`, `sed 'e'`), and options that make an
 * ordinary program run a command or write a file its words name (`tar --to-command=…`, `git -c
 * core.pager=…`, `find -exec`, `rsync -e`, `npm --script-shell=…`). Such a request is tagged
 * `runs-command`, which no prefix rule names (`tar *` approves a tar, not the shell its option
 * runs); an exact rule names what it holds.
 */
import { commandLineRun, SHELLS } from './nested-lines.js';

/**
 * Programs that run the command their arguments name (any word after them: `nice make`, `ssh host
 * cmd`, `ssh host` a login shell, `at now` what it reads). Neither a prefix (`nice *`) nor
 * "always" is ever offered for one (match.ts).
 */
export const RUNS_ITS_ARGUMENTS: ReadonlySet<string> = new Set([
  // privilege
  'sudo', 'su', 'doas', 'pkexec', 'run0', 'sudoedit', 'runuser', 'sg',
  // the shell's own, and wrappers
  'env', 'xargs', 'nice', 'nohup', 'time', 'timeout', 'command', 'exec', 'eval', 'builtin', 'watch', 'stdbuf', 'ionice', 'flock', 'parallel',
  'busybox', 'chronic', 'caffeinate', 'unbuffer', 'setsid', 'taskset', 'chrt', 'numactl', 'setarch', 'fakeroot', 'chroot', 'unshare', 'nsenter',
  'firejail', 'systemd-run', 'xvfb-run', 'dbus-run-session', 'ssh-agent', 'entr', 'script', 'tmux', 'screen',
  // tracers and debuggers run their program
  'strace', 'ltrace', 'valgrind', 'gdb',
  // package runners, remote and later runs
  'npx', 'pnpx', 'bunx', 'ssh', 'at', 'batch', 'crontab',
]);

/** Whether `program`, one of `RUNS_ITS_ARGUMENTS`, runs a command with `next` as its first word after it (`command -v x` only prints). */
export function runsItsArgument(program: string, next: string | undefined): boolean {
  return RUNS_ITS_ARGUMENTS.has(program) && next !== undefined && !(program === 'command' && /^-[vV]/.test(next));
}

/** Interpreters and their options that take code inline (`python3 -c '…'`, `perl -ne '…'`, `node --eval '…'`). */
const INLINE_CODE: Readonly<Record<string, { short?: string; long?: readonly string[] }>> = {
  python: { short: 'c' }, python2: { short: 'c' }, python3: { short: 'c' },
  perl: { short: 'eE' }, ruby: { short: 'e' }, lua: { short: 'e' }, osascript: { short: 'e' }, php: { short: 'rBRE' },
  node: { short: 'ep', long: ['--eval', '--print'] },
  pwsh: { short: 'ce', long: ['-command', '-encodedcommand'] }, powershell: { short: 'ce', long: ['-command', '-encodedcommand'] },
  expect: { short: 'c' },
};

/** Every program that may run another one from its arguments: never offered as a prefix (`python3 *` approves any code). */
export const RUNS_OTHER_PROGRAMS: ReadonlySet<string> = new Set([...RUNS_ITS_ARGUMENTS, ...SHELLS, ...Object.keys(INLINE_CODE), 'find', 'source', '.']);

/** How an option is matched: its long names (GNU and git take any unambiguous shortening), its short letters in a cluster, whole words. */
interface Options {
  long?: readonly string[];
  /** Letters that run or write in a cluster of single-dash options (`-I`, `-cvI`), case as given. */
  short?: string;
  /** Whole words (`find -exec`, `tar`'s old `-TT`). */
  words?: readonly string[];
  /** Anything else the program's words may hold (a script's commands, an assignment). */
  also?: (args: readonly string[]) => boolean;
}

const AWK: Options = { long: ['--file', '--exec', '--include', '--load', '--source'], short: 'fEil', also: (args) => args.some((arg) => !arg.startsWith('-') && AWK_RUNS.test(arg)) };
const NPM: Options = {
  // `--prefix`, `--dir`, `--cwd`, `-C`: another folder's package.json, whose scripts are what runs.
  long: ['--script-shell', '--node-options', '--userconfig', '--globalconfig', '--git', '--shell', '--editor', '--browser', '--viewer', '--call', '--init-module', '--prefix', '--dir', '--cwd'],
  short: 'C',
  // `npm exec`, `npm x`, `pnpm dlx`, `yarn exec`, `npm explore`: run the command that follows.
  also: (args) => RUNNING_SUBCOMMANDS.has(args.find((arg) => !arg.startsWith('-')) ?? '') || args.some((arg) => /^-c$/.test(arg)),
};
const LESS: Options = { also: (args) => args.some((arg) => arg.startsWith('+')) };
const VIM: Options = { long: ['--cmd'], short: 'cSu', also: LESS.also! };
const NC: Options = { long: ['--exec', '--sh-exec', '--lua-exec'], short: 'ec' };

/**
 * Options (and code) that make a program run a command, or write a file its words name, though
 * the program does neither when it is used as a prefix rule's words suggest (`tar *`, `git log *`).
 */
const RUNNING_OPTIONS: Readonly<Record<string, Options>> = {
  tar: {
    long: ['--to-command', '--checkpoint-action', '--use-compress-program', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command'],
    short: 'IF',
    // The old style: `tar cIf prog x.tar` (a first word of letters, no dash).
    also: (args) => args[0] !== undefined && /^[A-Za-z]+$/.test(args[0]) && /[IF]/.test(args[0]),
  },
  git: { also: gitRuns },
  find: { words: ['-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls'] },
  rsync: { long: ['--rsh', '--rsync-path', '--remote-option'], short: 'eM' },
  scp: { short: 'SF', also: sshCommandOption },
  sftp: { short: 'SDF', also: sshCommandOption },
  awk: AWK, gawk: AWK, mawk: AWK, nawk: AWK,
  sed: { long: ['--file'], short: 'f', also: sedRuns },
  npm: NPM, pnpm: NPM, yarn: NPM,
  // bun is a package runner too (`bun test *` is offered), and takes code inline.
  bun: { ...NPM, short: 'Ce', long: [...NPM.long!, '--eval', '--print'] },
  // `make test CC='sh -c …'`: a variable on the line is any recipe's; `--eval` adds a rule; `-f`, `-C` read another makefile.
  make: { long: ['--eval', '--file', '--makefile', '--directory'], short: 'EfC', also: (args) => args.some((arg) => /^[A-Za-z_.][A-Za-z0-9_.-]*\s*[:+?!]*=/.test(arg)) },
  go: { words: ['-exec', '--exec', '-toolexec', '--toolexec', '-vettool', '--vettool'], also: (args) => args.some((arg) => /^--?(exec|toolexec|vettool)=/.test(arg)) },
  cargo: { long: ['--config'] },
  less: LESS, more: LESS, most: LESS,
  man: { long: ['--pager', '--html'], short: 'PH' },
  vim: VIM, vi: VIM, nvim: VIM, view: VIM, ex: VIM, vimdiff: VIM,
  emacs: { long: ['--eval', '--load', '--funcall'], short: 'lf' },
  zip: { long: ['--unzip-command'], also: (args) => args.some((arg) => arg.startsWith('-TT')) },
  nc: NC, ncat: NC, netcat: NC,
  socat: { also: (args) => args.some((arg) => /(^|[,:!])(exec|system):/i.test(arg)) },
  tcpdump: { short: 'z' },
};

const RUNNING_SUBCOMMANDS = new Set(['exec', 'x', 'dlx', 'explore']);

/** awk code that runs a command (`system(…)`, `print | "cmd"`, `"cmd" | getline`), writes a file (`print > "f"`), or loads code. */
const AWK_RUNS = /system|\||@load|@include|\bprintf?\b[^;{}\n]*>/;

/**
 * Whether `program` (as `programName` names it), given `args`, runs a command or writes a file
 * named in its words that its name and first words do not show: see the table above.
 */
export function runsCommand(program: string, args: readonly string[]): boolean {
  if (RUNS_ITS_ARGUMENTS.has(program)) return runsItsArgument(program, args[0]);
  if (SHELLS.has(program)) return commandLineRun([program, ...args], 0) !== undefined;
  const inline = INLINE_CODE[program];
  if (inline !== undefined && hasOption(args, inline)) return true;
  if (program === 'deno' && args[0] === 'eval') return true;
  const options = RUNNING_OPTIONS[program];
  return options !== undefined && hasOption(args, options);
}

function hasOption(args: readonly string[], options: Options): boolean {
  return args.some((arg) => {
    if (options.words?.includes(arg) === true) return true;
    if (options.long?.some((name) => isLongOption(arg, name)) === true) return true;
    return options.short !== undefined && /^-[^-]/.test(arg) && [...arg.slice(1)].some((c) => options.short!.includes(c));
  }) || options.also?.(args) === true;
}

/**
 * `arg` is the long option `name`, with a value or not, or a shortening of it: GNU, git and npm
 * take any unambiguous prefix (`tar --to-com=…`). An ambiguous one is refused by the program, so
 * reading it as this one is harmless. `name` may have one dash (`pwsh -Command`): compared without case then.
 */
export function isLongOption(arg: string, name: string): boolean {
  const bare = arg.split('=', 1)[0]!;
  if (!name.startsWith('--')) return bare.length >= 3 && name.startsWith(bare.toLowerCase());
  return bare === name || (bare.length >= 3 && bare.startsWith('--') && name.startsWith(bare));
}

/** `ssh`, `scp`, `sftp -o ProxyCommand=…` (and `LocalCommand`, `KnownHostsCommand`…): a command run here. */
function sshCommandOption(args: readonly string[]): boolean {
  return args.some((arg, i) => (arg === '-o' ? /command/i.test(args[i + 1] ?? '') : arg.startsWith('-o') && /command/i.test(arg)));
}

/**
 * git: a config value on the line (`-c core.pager=…`, `--config-env`, `clone --config`; pagers,
 * editors, ssh commands, filters, aliases, fsmonitor all run), `--exec-path=`, and the
 * subcommands' options that run a command or write a file (`log --output=…`, `diff --ext-diff`,
 * `fetch --upload-pack=…`, `rebase -x`, `grep -O`, `clone --template=…` installs hooks),
 * `bisect run`, `submodule foreach`.
 */
function gitRuns(args: readonly string[]): boolean {
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    if (/^-c/.test(arg) || isLongOption(arg, '--config-env') || /^--exec-path=/.test(arg)) return true;
    if (/^-C$|^--(git-dir|work-tree|namespace|super-prefix)$/.test(arg)) i++; // its value
  }
  const sub = args[i];
  const rest = args.slice(i + 1);
  if ((sub === 'bisect' && rest[0] === 'run') || (sub === 'submodule' && rest.includes('foreach'))) return true;
  const long = ['--ext-diff', '--output', '--upload-pack', '--receive-pack', '--exec', '--extcmd', '--open-files-in-pager', '--sendmail-cmd', '--to-cmd', '--cc-cmd', '--header-cmd', '--template', '--config'];
  const shorts: Readonly<Record<string, string>> = { rebase: 'x', difftool: 'x', clone: 'uc', fetch: 'u', pull: 'u', 'ls-remote': 'u', grep: 'O', 'format-patch': 'o', archive: 'o' };
  const short = sub !== undefined ? (shorts[sub] ?? '') : '';
  return rest.some((arg) => long.some((name) => isLongOption(arg, name)) || (short !== '' && /^-[^-]/.test(arg) && [...arg.slice(1)].some((c) => short.includes(c))));
}

/**
 * sed: a script read from a file (`-f`), or one whose commands run or write: `e` (run a command),
 * `s/…/…/e`, `w file`, `W file`, `s/…/…/w file`. Read roughly and toward tagging: after its `s`
 * commands (their flags judged) are taken out, an `e`, `w` or `W` standing alone as a command
 * letter. `--sandbox` refuses all of them.
 */
function sedRuns(args: readonly string[]): boolean {
  if (args.includes('--sandbox')) return false;
  const scripts: string[] = [];
  let given = false;
  args.forEach((arg, i) => {
    if (arg === '-e' || arg === '--expression') {
      given = true;
      if (args[i + 1] !== undefined) scripts.push(args[i + 1]!);
    } else if (/^--expression=/.test(arg)) {
      given = true;
      scripts.push(arg.slice(arg.indexOf('=') + 1));
    } else if (/^-[^-]*e/.test(arg)) {
      // `-ne 'script'`, `-e'script'`
      given = true;
      const glued = arg.slice(arg.indexOf('e') + 1);
      const script = glued !== '' ? glued : args[i + 1];
      if (script !== undefined) scripts.push(script);
    }
  });
  if (!given) {
    const first = args.find((arg) => !arg.startsWith('-'));
    if (first !== undefined) scripts.push(first);
  }
  return scripts.some((script) => {
    let runs = false;
    const rest = script.replace(SED_SUBSTITUTE, (_, _d, flags: string) => {
      if (/[ewW]/.test(flags)) runs = true;
      return ';';
    });
    return runs || /(?<![A-Za-z\\])[ewW](?![A-Za-z])/.test(rest);
  });
}
/** A sed `s` command: its delimiter, pattern, replacement and flags (to the end of the command). */
const SED_SUBSTITUTE = /(?<![A-Za-z])s([^\\\n\sA-Za-z0-9])(?:\\.|(?!\1)[^\\])*\1(?:\\.|(?!\1)[^\\])*\1([^;}\n]*)/g;

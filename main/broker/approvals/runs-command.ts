/**
 * The one table of what runs a command the person may never see as one: programs that run the
 * command in their arguments (`nice make`, `xargs rm`, `ssh host cmd`), programs that run code
 * given inline (`python3 -c`, `awk 'BEGIN{system(…)}'`, `sed 'e'`), and options that make an
 * ordinary program run a command or write a file its words name (`tar --to-command=…`, `git -c
 * core.pager=…`, `find -exec`, `rsync -e`, `npm --script-shell=…`). Such a request is tagged
 * `runs-command`, which no prefix rule names (`tar *` approves a tar, not the shell its option
 * runs); an exact rule names what it holds.
 */
import { shellWord } from './env-split.js';
import { commandLineRun, SHELLS } from './nested-lines.js';
import { wrapperCommand } from './wrapper-values.js';
import { ownEntry } from './own-entry.js';

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
  'busybox', 'toybox', 'chronic', 'caffeinate', 'unbuffer', 'setsid', 'taskset', 'chrt', 'numactl', 'setarch', 'fakeroot', 'chroot', 'unshare', 'nsenter',
  'firejail', 'systemd-run', 'xvfb-run', 'dbus-run-session', 'ssh-agent', 'entr', 'script', 'tmux', 'screen',
  // limits, personalities, sandboxes and environments set for the command they run
  'setpriv', 'prlimit', 'choom', 'uclampset', 'linux32', 'linux64', 'i386', 'x86_64', 'uname26', 'runcon', 'cgexec', 'cpulimit', 'trickle',
  'eatmydata', 'nocache', 'faketime', 'fakechroot', 'bwrap', 'proot', 'systemd-nspawn', 'chpst', 'gosu', 'su-exec', 'tini', 'dumb-init', 'daemonize',
  'torsocks', 'torify', 'proxychains', 'proxychains4', 'sshpass', 'rlwrap', 'cross-env', 'env-cmd', 'dotenv', 'ifne', 'pee', 'hyperfine', 'watchexec',
  // tracers and debuggers run their program
  'strace', 'ltrace', 'valgrind', 'gdb', 'catchsegv',
  // package runners, remote and later runs
  'npx', 'pnpx', 'bunx', 'ssh', 'at', 'batch', 'crontab',
]);

/** Whether `program`, one of `RUNS_ITS_ARGUMENTS`, runs a command with `next` as its first word after it (`command -v x` only prints). */
export function runsItsArgument(program: string, next: string | undefined): boolean {
  return isWrapper(program) && next !== undefined && !(program === 'command' && /^-[vV]/.test(next));
}

/** One of `RUNS_ITS_ARGUMENTS`, or the dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 prog`). */
function isWrapper(program: string): boolean {
  return RUNS_ITS_ARGUMENTS.has(program) || /^ld(-linux[\w.-]*|-musl[\w.-]*)?\.so(\.\d+)*$/.test(program);
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
export const RUNS_OTHER_PROGRAMS: ReadonlySet<string> = new Set([...RUNS_ITS_ARGUMENTS, ...SHELLS, ...Object.keys(INLINE_CODE), 'find', 'source', '.', 'trap']);

/** How an option is matched: its long names (GNU and git take any unambiguous shortening), its short letters in a cluster, whole words. */
interface Options {
  long?: readonly string[];
  /** Letters that run or write in a cluster of single-dash options (`-I`, `-cvI`), case as given. */
  short?: string;
  /** Whole words (`find -exec`, `tar`'s old `-TT`). */
  words?: readonly string[];
  /** Anything else the program's words may hold (a script's commands, an assignment). */
  also?: (args: readonly string[]) => boolean;
  /** Long options spelt with any number of dashes (npm's nopt: `-script-shell=x`, `---script-shell=x`). */
  anyDashes?: boolean;
}

const AWK: Options = { long: ['--file', '--exec', '--include', '--load', '--source'], short: 'fEil', also: (args) => args.some((arg) => !arg.startsWith('-') && AWK_RUNS.test(arg)) };
const NPM: Options = {
  // `--prefix`, `--dir`, `--cwd`, `-C`: another folder's package.json, whose scripts are what runs.
  long: ['--script-shell', '--node-options', '--userconfig', '--globalconfig', '--git', '--shell', '--editor', '--browser', '--viewer', '--call', '--init-module', '--prefix', '--dir', '--cwd'],
  short: 'C',
  // nopt (npm's reader) strips every leading dash: `-script-shell=x` and `---script-shell=x` are `--script-shell=x`.
  anyDashes: true,
  also: (args) => runsSubcommand(args) || args.some((arg) => /^-c$/.test(arg)),
};
const LESS: Options = { also: (args) => args.some((arg) => arg.startsWith('+')) };
// `-s` reads keys from a file (`:!…`), `-w`/`-W` and `-V<n><file>` write a file, `--startuptime` too.
const VIM: Options = { long: ['--cmd', '--startuptime'], short: 'cSusWw', also: (args) => LESS.also!(args) || args.some((arg) => /^-V\d*[^\d]/.test(arg)) };
/** netcat's options whose value is a shell command line (`COMMAND_VALUES`); `--lua-exec` runs Lua, not a line. */
const NC_COMMANDS = { long: ['--exec', '--sh-exec'], short: 'ec' } as const;
const NC: Options = { long: [...NC_COMMANDS.long, '--lua-exec'], short: NC_COMMANDS.short };
/** tar's options whose value is a command line it runs (`COMMAND_VALUES`): any shortening, or `-I`/`-F`. */
const TAR_COMMANDS = { long: ['--to-command', '--use-compress-program', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command'], short: 'IF' } as const;

/**
 * Options (and code) that make a program run a command, or write a file its words name, though
 * the program does neither when it is used as a prefix rule's words suggest (`tar *`, `git log *`).
 */
const RUNNING_OPTIONS: Readonly<Record<string, Options>> = {
  tar: {
    // `--index-file`, `-g`/`--listed-incremental`, `--volno-file`: write a file named (the listing holds names the worker chose).
    long: [...TAR_COMMANDS.long, '--checkpoint-action', '--index-file', '--listed-incremental', '--volno-file'],
    short: `${TAR_COMMANDS.short}g`,
    // The old style: `tar cIf prog x.tar` (a first word of letters, no dash).
    also: (args) => args[0] !== undefined && /^[A-Za-z]+$/.test(args[0]) && /[IFg]/.test(args[0]),
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
  // `make test CC='sh -c …'`: a variable on the line is any recipe's; `--eval` adds a rule; `-f`, `-C` read another makefile,
  // and so does `-I` (`--include-dir`): a makefile's `include x.mk` not found here is read from that folder.
  // Any word holding `=` defines one, its name expanded by make (`SH$^ELL=x` sets SHELL, ` SHELL=x` too).
  make: { long: ['--eval', '--file', '--makefile', '--directory', '--include-dir'], short: 'EfCI', also: (args) => args.some((arg) => !arg.startsWith('-') && arg.includes('=')) },
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

/**
 * `npm exec`, `npm x`, `pnpm dlx`, `yarn exec`, `npm explore`, `yarn node`: run the command that
 * follows; npm takes a command by any shortening no other shares (`npm exe`, `npm explo`).
 * `npm init <name>`, `npm create <name>` (`innit`, `yarn create`, `bun create`) run the package
 * `create-<name>`.
 */
function runsSubcommand(args: readonly string[]): boolean {
  const at = args.findIndex((arg) => !arg.startsWith('-'));
  const sub = args[at];
  if (sub === undefined) return false;
  if (['x', 'dlx', 'node'].includes(sub) || (sub.length >= 3 && 'exec'.startsWith(sub)) || (sub.length >= 5 && 'explore'.startsWith(sub))) return true;
  return ['init', 'innit', 'create'].includes(sub) && args.slice(at + 1).some((arg) => !arg.startsWith('-'));
}

/** awk code that runs a command (`system(…)`, `print | "cmd"`, `"cmd" | getline`), writes a file (`print > "f"`), or loads code. */
const AWK_RUNS = /system|\||@load|@include|\bprintf?\b[^;{}\n]*>/;

/**
 * Whether `program` (as `programName` names it), given `args`, runs a command or writes a file
 * named in its words that its name and first words do not show: see the table above.
 */
export function runsCommand(given: string, args: readonly string[]): boolean {
  const program = asVim(given);
  if (isWrapper(program)) return runsItsArgument(program, args[0]);
  if (SHELLS.has(program) || program === 'trap') return commandLineRun([program, ...args], 0) !== undefined;
  const inline = ownEntry(INLINE_CODE, program);
  if (inline !== undefined && hasOption(args, inline)) return true;
  if (program === 'deno' && args[0] === 'eval') return true;
  const options = ownEntry(RUNNING_OPTIONS, program);
  return options !== undefined && hasOption(args, options);
}

function hasOption(args: readonly string[], options: Options): boolean {
  return args.some((arg) => {
    if (options.words?.includes(arg) === true) return true;
    const long = options.anyDashes === true ? asLong(arg) : arg;
    if (options.long?.some((name) => isLongOption(long, name)) === true) return true;
    return options.short !== undefined && /^-[^-]/.test(arg) && [...arg.slice(1)].some((c) => options.short!.includes(c));
  }) || options.also?.(args) === true;
}

/**
 * A word as nopt reads it: every leading dash stripped, a single-dash word whose name is no
 * cluster of short letters a long option (`-script-shell=x`; `-s`, `-gs` stay short: npm's short
 * letters are read as a cluster). Names of three letters or more are read as long, toward tagging.
 */
function asLong(arg: string): string {
  const name = arg.replace(/^-+/, '');
  if (arg.startsWith('--') && !arg.startsWith('---')) return arg;
  return arg.startsWith('-') && name !== '' && !name.startsWith('-') && (arg.startsWith('---') || name.split('=', 1)[0]!.length >= 3) ? `--${name}` : arg;
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
  for (let i = 0; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    if (/^-c/.test(arg) || isLongOption(arg, '--config-env') || /^--exec-path=/.test(arg)) return true;
    if (/^-C$|^--(git-dir|work-tree|namespace|super-prefix)$/.test(arg)) i++; // its value
  }
  const { sub, rest } = gitSubcommand(args);
  if ((sub === 'bisect' && rest[0] === 'run') || (sub === 'submodule' && rest.includes('foreach'))) return true;
  if (sub === 'config' && gitConfigSet(rest) !== undefined) return true;
  // filter-branch's filters are shell code, filter-repo's callbacks Python code.
  const filters = ['--tree-filter', '--index-filter', '--msg-filter', '--env-filter', '--commit-filter', '--parent-filter', '--tag-name-filter', '--setup'];
  const long = ['--ext-diff', '--output', '--upload-pack', '--receive-pack', '--exec', '--extcmd', '--open-files-in-pager', '--sendmail-cmd', '--to-cmd', '--cc-cmd', '--header-cmd', '--template', '--config', ...filters];
  if (rest.some((arg) => /^--[a-z-]*callback(=|$)/.test(arg))) return true;
  const shorts: Readonly<Record<string, string>> = { ...GIT_SHORT_COMMANDS, clone: 'uc', 'format-patch': 'o', archive: 'o' };
  const short = sub !== undefined ? (ownEntry(shorts, sub) ?? '') : '';
  return rest.some((arg) => long.some((name) => isLongOption(arg, name)) || (short !== '' && /^-[^-]/.test(arg) && [...arg.slice(1)].some((c) => short.includes(c))));
}

/** git's subcommands' short options whose value is a command line (`rebase -x`, `fetch -u`). */
const GIT_SHORT_COMMANDS: Readonly<Record<string, string>> = { rebase: 'x', difftool: 'x', clone: 'u', fetch: 'u', pull: 'u', 'ls-remote': 'u', grep: 'O' };

/** git's subcommand after its global options (and their values), and the words after it. */
function gitSubcommand(args: readonly string[]): { sub: string | undefined; rest: readonly string[] } {
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) if (/^-[Cc]$|^--(git-dir|work-tree|namespace|super-prefix|config-env)$/.test(args[i]!)) i++;
  return { sub: args[i], rest: args.slice(i + 1) };
}

/**
 * Config keys that name no command, file or folder git reads later: setting them runs nothing.
 * Any other (`alias.*`, `core.pager`, `core.fsmonitor`, `core.hooksPath`, `*.textconv`,
 * `filter.*.clean`, `credential.helper`, `include.path`, and keys git adds) is read as running.
 */
const GIT_PLAIN_KEYS = /^(user\.(name|email)|color\..+|advice\..+|init\.defaultbranch|pull\.(rebase|ff)|push\.(default|autosetupremote)|fetch\.prune|core\.(autocrlf|eol|filemode|ignorecase|quotepath|safecrlf)|merge\.ff|rebase\.(autosquash|autostash)|branch\.[^.]+\.(remote|merge|rebase)|log\.[a-z]+|status\.[a-z]+|diff\.(renames|algorithm|colormoved|mnemonicprefix))$/i;

/**
 * What `git config …` sets, when it sets a key that is not plain (`git config alias.st '!rm -rf
 * ~'`, then `git st`, which `git st *` approves, runs it): the key and its value. Both the old form
 * (`git config [--add] name value [value-pattern]`) and the new (`git config set name value`);
 * reading forms (`--get`, `-l`, `get`, `list`, a name alone) set nothing. Renaming a section writes
 * each of its keys anew under the new name (`git config color.st '!…'`, a plain key, then `git
 * config --rename-section color alias` makes `alias.st`): a rename to a section not wholly plain
 * sets a key of it, its value the one already written (not on the line: empty). Its words are read
 * as git's parse-options reads config's: options up to the first word that is none
 * (`gitConfigOptions`), every word after it the name, the value and the value pattern as they are.
 */
function gitConfigSet(rest: readonly string[]): { key: string; value: string } | undefined {
  const options = gitConfigOptions(rest, 0);
  const words = rest.slice(options.end);
  if (options.renames) return renamedTo(words.slice(1));
  if (options.reads) return undefined;
  const [first, ...others] = words;
  if (first === 'set' || first === 'rename-section') {
    // The subcommands (git >= 2.46) read their own options the same way (`git config set --all name value`).
    const named = words.slice(gitConfigOptions(words, 1).end);
    if (first === 'rename-section') return renamedTo(named.slice(1));
    // `set` sets whatever its value reads as: a key not plain is enough.
    return setting(named[0], named[1] ?? '');
  }
  if (first !== undefined && ['get', 'list', 'unset', 'edit', 'remove-section', 'get-color', 'get-colorbool'].includes(first)) return undefined;
  return setting(first, others[0]);
}

/**
 * git config's options from `words[from]`, as its parse-options reads them
 * (`PARSE_OPT_STOP_AT_NON_OPTION`): up to the first word that is no option, or past `--` /
 * `--end-of-options`; `end` is the first word after them. A word after the name is the value or
 * the value pattern, whatever it looks like: `git config core.editor '-;x'` sets the editor to
 * `-;x`, `git config alias.st '!x' --get` sets alias.st (`--get` its value pattern). Read as
 * options wherever they stood, such lines were taken for reading forms or a name alone: untagged,
 * and `git config *` approved them.
 */
function gitConfigOptions(words: readonly string[], from: number): { end: number; reads: boolean; renames: boolean } {
  let reads = false;
  let renames = false;
  let i = from;
  for (; i < words.length; i++) {
    const arg = words[i]!;
    if (arg === '--' || arg === '--end-of-options') return { end: i + 1, reads, renames };
    if (!arg.startsWith('-') || arg === '-') break;
    if (gitConfigValueNext(arg)) i++; // its value
    else if (isLongOption(arg, '--rename-section')) renames = true;
    else if (/^-(l|-list|-get.*|-unset.*|-remove-section|-edit|e|-show-.*)$/.test(arg)) reads = true;
  }
  return { end: i, reads, renames };
}

/** git config's options that take a value, by any shortening git's parse-options takes (`--fil x`); `-f`, `-t` as short ones. */
const GIT_CONFIG_VALUE_OPTIONS = ['--file', '--blob', '--type', '--default', '--comment', '--value'];

/**
 * Whether `arg`, an option of git config, takes the next word as its value: a long one without
 * `=`, by any shortening (`--fil .git/config`), or a cluster of short ones whose first `f` or `t`
 * ends it (`-f x`, `-zf x`, `-t bool`; `-fx` and `-ft` hold their own: the file `x`, the file `t`).
 * Read as a word of the line, the value was taken for the section renamed (`--fil .git/config
 * --rename-section color alias` read `color` as the new name).
 */
function gitConfigValueNext(arg: string): boolean {
  if (arg.startsWith('--')) return !arg.includes('=') && GIT_CONFIG_VALUE_OPTIONS.some((name) => isLongOption(arg, name));
  const at = arg.slice(1).search(/[ft]/);
  return at >= 0 && at === arg.length - 2;
}

/** Sections whose every key is plain (`GIT_PLAIN_KEYS`): a section renamed to one of them runs nothing. */
const GIT_PLAIN_SECTIONS = /^(color|advice)(\.|$)/i;

/**
 * A section renamed to the first of `names` (none: git refuses it): a key of it set, unless the
 * section is wholly plain. Any word after the first may be the new name (an option's value this
 * reading does not know of comes first), so each is: one not wholly plain sets a key.
 */
function renamedTo(names: readonly string[]): { key: string; value: string } | undefined {
  const section = names.find((name) => !GIT_PLAIN_SECTIONS.test(name));
  return section !== undefined ? { key: `${section}.*`, value: '' } : undefined;
}

function setting(key: string | undefined, value: string | undefined): { key: string; value: string } | undefined {
  return key !== undefined && value !== undefined && !GIT_PLAIN_KEYS.test(key) ? { key, value } : undefined;
}

/**
 * sed: a script read from a file (`-f`), or one whose commands run or write: `e` (run a command),
 * `s/…/…/e`, `w file`, `W file`, `s/…/…/w file`. Its options are read as GNU sed reads them
 * (`sedOptions`), its scripts by sed's grammar (`sedScriptRuns`). `--sandbox` refuses all of them.
 */
function sedRuns(args: readonly string[]): boolean {
  const read = sedOptions(args);
  // sed joins its `-e` scripts with new lines (an `a\\` at one's end goes on into the next).
  return read.fromFile || (!read.sandbox && read.scripts.length > 0 && sedScriptRuns(read.scripts.join('\n')));
}

/** sed's long options (getopt_long: any unambiguous shortening), and whether each takes a value. */
const SED_LONG: Readonly<Record<string, 'value' | 'optional' | 'none'>> = {
  '--expression': 'value', '--file': 'value', '--line-length': 'value', '--in-place': 'optional', '--sandbox': 'none',
  '--quiet': 'none', '--silent': 'none', '--debug': 'none', '--follow-symlinks': 'none', '--posix': 'none',
  '--regexp-extended': 'none', '--separate': 'none', '--unbuffered': 'none', '--null-data': 'none', '--zero-terminated': 'none',
  '--binary': 'none', '--help': 'none', '--version': 'none',
};

/**
 * sed's words as GNU sed's getopt reads them: short options in clusters, where `e`, `f` and `l`
 * take the rest of the cluster or the next word and `i` the rest of the cluster only (`-i.eb` is a
 * suffix, no `e`); long ones by any shortening (`--expr=…`); options after operands too, none
 * after `--` (a file named `--sandbox` there sandboxes nothing). The scripts are the `-e` values,
 * else the first operand. A shortening several options share is read as each (sed refuses it).
 */
function sedOptions(args: readonly string[]): { scripts: string[]; fromFile: boolean; sandbox: boolean } {
  const scripts: string[] = [];
  const operands: string[] = [];
  let fromFile = false;
  let sandbox = false;
  let given = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const names = Object.keys(SED_LONG).filter((name) => isLongOption(arg, name));
      const glued = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : undefined;
      const value = glued ?? (names.some((name) => SED_LONG[name] === 'value') ? args[++i] : undefined);
      if (names.includes('--expression')) {
        given = true;
        if (value !== undefined) scripts.push(value);
      }
      if (names.includes('--file') || names.length === 0) fromFile = true; // an option sed does not take: read toward tagging
      if (names.length === 1 && names[0] === '--sandbox' && arg.length >= 4) sandbox = true;
      continue;
    }
    if (!arg.startsWith('-') || arg === '-') {
      operands.push(arg);
      continue;
    }
    for (let k = 1; k < arg.length; k++) {
      const letter = arg[k]!;
      if (letter === 'i') break; // its suffix is the rest of the cluster
      if (letter === 'e' || letter === 'f' || letter === 'l') {
        const value = k + 1 < arg.length ? arg.slice(k + 1) : args[++i];
        if (letter === 'e') {
          given = true;
          if (value !== undefined) scripts.push(value);
        }
        if (letter === 'f') fromFile = true;
        break;
      }
    }
  }
  if (!given && operands[0] !== undefined) scripts.push(operands[0]);
  return { scripts, fromFile, sandbox };
}

/**
 * Whether a sed script runs a command or writes a file: an `e`, `w` or `W` command, or an `s`
 * whose flags hold `e` or `w`. Read by sed's grammar, command by command: addresses (a number,
 * `$`, `first~step`, `/re/` or `\cREc` with any delimiter, letters too, and their `I`/`M` flags),
 * `!`, then the command letter; `s` and `y` with any delimiter (`sxaxbxe` runs `b`); `a`, `i`, `c`,
 * `r`, `R` and `#` to the end of their line; a label (`:a`, `b a`, `t`, `T`) to `;` or a blank.
 * Anything it cannot read is counted as running (sed would refuse it, or it is something new).
 */
export function sedScriptRuns(script: string): boolean {
  let i = 0;
  const n = script.length;
  /**
   * Past a delimited part (`re/`) from `i`; false when it does not close. In a regex (`regex`) a
   * bracket expression holds the delimiter (`s/[/]/x/` is one `s`), as GNU sed reads it.
   */
  const delimited = (delimiter: string, regex: boolean): boolean => {
    for (; i < n; i++) {
      const c = script[i]!;
      if (c === '\\') i++;
      else if (regex && c === '[') {
        const close = bracketEnd(script, i);
        if (close < 0) return false;
        i = close;
      } else if (c === delimiter) {
        i++;
        return true;
      } else if (c === '\n') return false;
    }
    return false;
  };
  /** To the end of the line: text (`a`, `i`, `c`) goes on past a `\\` at a line's end, a comment or a file name does not. */
  const toLineEnd = (continued: boolean): void => {
    while (i < n && script[i] !== '\n') i += continued && script[i] === '\\' ? 2 : 1;
  };
  const address = (second: boolean): boolean => {
    const c = script[i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c) || (second && /[+~]/.test(c))) {
      i++;
      while (i < n && /[0-9~]/.test(script[i]!)) i++;
    } else if (c === '$') i++;
    else if (c === '/' || c === '\\') {
      const delimiter = c === '/' ? '/' : script[i + 1];
      if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') return false;
      i += c === '/' ? 1 : 2;
      if (!delimited(delimiter, true)) return false;
      while (i < n && /[IM]/.test(script[i]!)) i++;
    }
    return true;
  };
  while (i < n) {
    while (i < n && /[\s;}]/.test(script[i]!)) i++;
    if (i >= n) return false;
    if (!address(false)) return true;
    while (i < n && /[ \t]/.test(script[i]!)) i++;
    if (script[i] === ',') {
      i++;
      while (i < n && /[ \t]/.test(script[i]!)) i++;
      if (!address(true)) return true;
    }
    while (i < n && /[\s!]/.test(script[i]!)) i++;
    const command = script[i++];
    if (command === undefined) return false;
    if ('ewW'.includes(command)) return true;
    if (command === 's' || command === 'y') {
      const delimiter = script[i++];
      if (delimiter === undefined || delimiter === '\n' || delimiter === '\\') return true;
      if (!delimited(delimiter, command === 's') || !delimited(delimiter, false)) return true;
      if (command === 's') {
        // Its flags, to the end of the command: `e` runs, `w file` writes.
        while (i < n && /[gpIiMm0-9 \t]/.test(script[i]!)) i++;
        if (script[i] === 'e' || script[i] === 'w') return true;
      }
    } else if ('aicrR#'.includes(command)) toLineEnd('aic'.includes(command));
    else if (':btTv'.includes(command)) {
      // A label (or `v`'s version) ends at `;` or a blank (`:a e x` runs `e x`).
      while (i < n && /[ \t]/.test(script[i]!)) i++;
      while (i < n && !/[;\s}]/.test(script[i]!)) i++;
    }
    else if ('qQlL'.includes(command)) while (i < n && /[ \t0-9]/.test(script[i]!)) i++;
    else if (!'{}=dDFgGhHnNpPxz'.includes(command)) return true; // unknown: counted as running
  }
  return false;
}

/** Where the bracket expression opened at `open` closes (`[]x]`, `[^]x]`, `[[:alpha:]/]`); -1 when it does not. */
function bracketEnd(text: string, open: number): number {
  let i = open + 1;
  if (text[i] === '^') i++;
  if (text[i] === ']') i++;
  for (; i < text.length; i++) {
    if (text[i] === ']') return i;
    if (text[i] === '[' && /[:=.]/.test(text[i + 1] ?? '')) {
      const close = text.indexOf(`${text[i + 1]}]`, i + 2);
      if (close < 0) return -1;
      i = close + 1;
    }
  }
  return -1;
}

/**
 * Options whose value is a command line the program runs (`tar --to-command='…'`, `rsync -e '…'`):
 * their long names (any shortening) and short letters (the rest of the cluster or the next word).
 */
const COMMAND_VALUES: Readonly<Record<string, { long?: readonly string[]; short?: string; anyDashes?: boolean; also?: (args: readonly string[]) => string[] }>> = {
  tar: {
    ...TAR_COMMANDS,
    also: (args) => optionValues(args, ['--checkpoint-action'], '').flatMap((value) => (/^exec=/.test(value) ? [value.slice(5)] : [])),
  },
  rsync: { long: ['--rsh', '--rsync-path'], short: 'e' },
  scp: { short: 'S', also: sshCommands },
  sftp: { short: 'S', also: sshCommands },
  man: { long: ['--pager'], short: 'P' },
  zip: { long: ['--unzip-command'], also: (args) => args.flatMap((arg, i) => (arg.startsWith('-TT') ? [arg.length > 3 ? arg.slice(3) : (args[i + 1] ?? '')] : [])) },
  nc: NC_COMMANDS, ncat: NC_COMMANDS, netcat: NC_COMMANDS,
  tcpdump: { short: 'z' },
  // nopt's spelling (`-script-shell=x`), as RUNNING_OPTIONS reads npm's.
  npm: { long: ['--script-shell', '--shell'], anyDashes: true },
  pnpm: { long: ['--script-shell', '--shell'], anyDashes: true },
  git: {
    long: ['--upload-pack', '--receive-pack', '--exec', '--extcmd', '--sendmail-cmd', '--to-cmd', '--cc-cmd', '--header-cmd', '--tree-filter', '--index-filter', '--msg-filter', '--env-filter', '--commit-filter', '--parent-filter', '--tag-name-filter', '--setup'],
    // A config value (`-c core.pager=…`, `-c alias.x='!…'`, `clone -c …`, `git config core.pager …`): a command for the
    // keys that run one; a subcommand's short option whose value is one (`rebase -x '…'`).
    also: (args) => {
      const { sub, rest } = gitSubcommand(args);
      const settings = [...optionValues(args, [], 'c'), ...(sub === 'clone' ? optionValues(rest, ['--config'], 'c') : [])];
      const set = sub === 'config' ? gitConfigSet(rest) : undefined;
      const short = sub !== undefined ? ownEntry(GIT_SHORT_COMMANDS, sub) : undefined;
      return [
        ...settings.flatMap((setting) => (setting.includes('=') ? [setting.slice(setting.indexOf('=') + 1)] : [])),
        ...(set !== undefined ? [set.value] : []),
        ...(short !== undefined ? optionValues(rest, [], short) : []),
      ].map((value) => value.replace(/^!/, ''));
    },
  },
  // `make test CC='…'`: a variable's value is part of the recipes' command lines.
  make: { also: (args) => args.flatMap((arg) => (!arg.startsWith('-') && arg.includes('=') ? [arg.slice(arg.indexOf('=') + 1)] : [])) },
  socat: { also: (args) => args.flatMap((arg) => [...arg.matchAll(/(?:^|[,:!])(?:exec|system):([^,!]*)/gi)].map((m) => m[1]!)) },
  less: { also: exCommands },
  more: { also: exCommands },
  vim: { also: exCommands },
  vi: { also: exCommands },
  nvim: { also: exCommands },
  view: { also: exCommands },
  vimdiff: { also: exCommands },
  ex: { also: exCommands },
};

/**
 * The command lines `program`'s words make it run, to be read as lines of their own (their tags
 * are the request's: `tar --to-command='curl … | sh'` is download-and-run too): the values of the
 * options above, and what a wrapper the danger reading does not look through runs (`setsid rm
 * -rf ~`, `ssh host 'curl … | sh'`: `wrapperRuns`). Each line is shorter than the words it came
 * from, and the request's readings share a budget (danger.ts): nested wrappers stay bounded.
 */
export function commandsRun(given: string, args: readonly string[]): string[] {
  const program = asVim(given);
  if (isWrapper(program)) return wrapperRuns(program, args);
  const table = ownEntry(COMMAND_VALUES, program);
  if (table === undefined) return [];
  return [...optionValues(args, table.long ?? [], table.short ?? '', table.anyDashes === true), ...(table.also?.(args) ?? [])].filter((line) => line.trim() !== '');
}

/**
 * Wrappers whose first word after their options is theirs, not the command's: `chroot /new cmd`,
 * `taskset ff cmd`, `sg group cmd`, `gosu user cmd`, `tmux new cmd`.
 */
const TAKES_A_WORD = new Set(['chroot', 'taskset', 'sg', 'gosu', 'su-exec', 'runuser', 'tmux', 'screen', 'at', 'batch', 'cgexec', 'runcon', 'setarch', 'flock']);

/**
 * What a wrapper runs: its words from the first that is no option, no number and no assignment
 * (`chrt 5 x`), and, when that word may be an option's value or the wrapper's own (`strace -o log
 * rm`, `ssh -i key host rm`, `chroot / rm`, `dotenv -e f -- rm`), from the next one too; after
 * ssh's host. A local wrapper runs them as words, so each is quoted again (`setsid sh -c 'rm -rf
 * ~'` is `sh`, `-c`, `rm -rf ~`, not `sh -c rm`); ssh joins them with blanks for the remote shell
 * (read as if it ran here, toward tagging), watch for `sh -c`. A word holding a blank or an
 * operator is read as a line of its own too: many run one (`hyperfine 'x' 'y'`, `tmux new 'x'`).
 * bwrap, tmux, chroot, unshare, nsenter and systemd-run are also read as their own parsers read them (`wrapperCommand`).
 */
function wrapperRuns(program: string, args: readonly string[]): string[] {
  const command = (from: number): number => args.findIndex((arg, i) => i >= from && !arg.startsWith('-') && !/^[\d,.:+-]+$/.test(arg) && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg));
  // bwrap, chroot, unshare…: where their own parser starts the command (`bwrap --bind / / cmd`); tmux: each command's lines (`tmux new -s x cmd \; …`).
  const parsed = wrapperCommand(program, args);
  const first = command(0);
  if (first < 0) return parsed?.lines ?? [];
  const starts = [first];
  if ((first > 0 && args[first - 1]!.startsWith('-') && args[first - 1] !== '--') || TAKES_A_WORD.has(program)) {
    const next = command(first + 1);
    if (next >= 0) starts.push(next);
  }
  if (parsed?.start !== undefined && parsed.start < args.length && !starts.includes(parsed.start)) starts.push(parsed.start);
  const lines = starts.flatMap((at) => {
    // watch runs its words joined, by `sh -c` (`watch -n1 echo 'a; rm -rf ~'` runs rm).
    if (program === 'watch') return [args.slice(at).join(' ')];
    if (program !== 'ssh') return [args.slice(at).map(shellWord).join(' ')];
    const remote = command(at + 1); // `at` is the host
    return remote >= 0 ? [args.slice(remote).join(' ')] : [];
  });
  const ownLines = args.slice(first).filter((arg) => /[\s;&|<>()`]/.test(arg));
  return [...lines, ...ownLines, ...(parsed?.lines ?? [])];
}

/**
 * The values of the options `long` (any shortening, `=value` or the next word) and `short` (glued
 * or the next word). `anyDashes`: long names are read as nopt reads them (`-script-shell=x`).
 */
function optionValues(args: readonly string[], long: readonly string[], short: string, anyDashes = false): string[] {
  return args.flatMap((given, i): string[] => {
    const arg = anyDashes ? asLong(given) : given;
    if (arg.startsWith('--')) {
      if (!long.some((name) => isLongOption(arg, name))) return [];
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[i + 1];
      return value !== undefined ? [value] : [];
    }
    if (short === '' || !/^-[^-]/.test(arg)) return [];
    const k = [...arg.slice(1)].findIndex((c) => short.includes(c));
    if (k < 0) return [];
    const glued = arg.slice(k + 2);
    const value = glued !== '' ? glued : args[i + 1];
    return value !== undefined ? [value] : [];
  });
}

/** `ssh -o ProxyCommand=…` (and the other `…Command` options): the command. */
function sshCommands(args: readonly string[]): string[] {
  return args.flatMap((arg, i) => {
    const option = arg === '-o' ? (args[i + 1] ?? '') : arg.startsWith('-o') ? arg.slice(2) : '';
    const m = /^\s*\w*command\s*[= ]\s*(.*)$/is.exec(option);
    return m ? [m[1]!] : [];
  });
}

/** An editor's or pager's ex commands that run a shell line: `+!cmd`, `-c '!cmd'`, `--cmd '!cmd'`. */
function exCommands(args: readonly string[]): string[] {
  return exValues(args).flatMap((command) => {
    const m = /^\s*:?\s*!(.*)$/s.exec(command);
    return m ? [m[1]!] : [];
  });
}

/**
 * The ex commands given on the line, as vim reads its words: `+cmd`, `--cmd cmd`, `-c cmd`, and
 * `-c` in a cluster of letters, its command the rest of the word or the next one (`-ccmd`,
 * `-esc cmd`: vim takes both); none after `--`. `-V` and `-q` keep the rest of their word.
 */
function exValues(args: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') break;
    if (arg.startsWith('+')) values.push(arg.slice(1));
    else if (arg === '--cmd') values.push(args[++i] ?? '');
    else if (/^-[^-]/.test(arg)) {
      const letter = /^-[^cVq]*c/.exec(arg);
      if (letter !== null) values.push(letter[0].length < arg.length ? arg.slice(letter[0].length) : (args[++i] ?? ''));
    }
  }
  return values;
}

/**
 * An ex command that is read whole (`!line`) or runs nothing of its own: a line number, a bare
 * quit or write of the files on the line (`q`, `qa!`, `wq`, `x`), a search alone (`isSearchOnly`).
 * Any other may run anything.
 */
const EX_READ_OR_PLAIN = /^\s*:?\s*(!|\d*\s*$|(q|qa|qall|quit|quita|quitall|cq|w|wq|wqa|wqall|x|xa|xall|wa|wall)!?\s*$)/;

/**
 * A search and nothing after it (`/needle`, `/needle/`, `?x?`). A search is an address: a command
 * may follow its closing delimiter (`/x/|call system(…)`, `/x/!sh`, `/x/;w ~/.bashrc` ran); a
 * collection may hold the delimiter (`/[/]/`): not read, so not plain.
 */
function isSearchOnly(command: string): boolean {
  const search = /^\s*:?\s*([/?])/.exec(command);
  if (search === null) return false;
  const delimiter = search[1]!;
  for (let i = search[0].length; i < command.length; i++) {
    const c = command[i]!;
    if (c === '\\') i++;
    else if (c === '[') return false;
    else if (c === delimiter) return command.slice(i + 1).trim() === '';
  }
  return true;
}

/**
 * A variable on make's line whose value or name make expands (`X:=$(shell …)` runs at once, as the
 * makefile is read; `$(file >…)`, `$(eval …)`; `$$(…)` is the shell's in a recipe): makefile
 * text, read as a shell line it named no program (`X:=$(shell rm -rf ~)` was runs-command only).
 * Its name is expanded as the line is read, whatever the definition (`$(shell rm -rf ~)X=1` ran
 * rm, read as a variable whose value `1` was all it ran).
 */
function makeExpands(arg: string): boolean {
  return !arg.startsWith('-') && arg.includes('=') && /\$[({]/.test(arg);
}

/** vim and its other names: their ex commands (`exValues`) may run anything. */
const VIM_NAMES = new Set(['vim', 'vi', 'nvim', 'view', 'ex', 'vimdiff']);

/**
 * vim's builds and names as installed (Debian's `vim.basic`, `vim.tiny`, `vim.gtk3`…, which
 * `editor`, `vi` and `ex` lead to; `gvim`, `rvim`, `evim`, `gview`, `vimx`): read as vim, its table's
 * options and ex commands. By their own names they were no program of the table, untagged, and a
 * prefix rule `vim.basic *` (offered for `vim.basic notes.txt`) approved `vim.basic -es -c 'call system(…)'`.
 */
function asVim(program: string): string {
  return /^(vim\.[a-z0-9]+|[gre]?vim|[gre]?view|g?vimdiff|vimx|editor|sensible-editor)$/.test(program) ? 'vim' : program;
}

/**
 * Whether `program`'s words hold a command only in part, which is not read: an ex command that is
 * not `!line` (read whole), a line number or a search (`vim -c 'silent !…'`, `-c 'call
 * system(…)'`, `-c 'w ~/.bashrc'`); makefile text (`make --eval='x: ; …'`, `-E`, a variable's
 * value make expands: `makeExpands`); tar's old-style
 * letters naming a compress or volume script (`tar xIf prog x.tar`: each letter takes the next
 * word in turn). What it runs is not known: the danger reading makes it unread-landing (no rule
 * approves it, nothing is offered to remember), as a line past the reading budget.
 */
export function runsInPart(given: string, args: readonly string[]): boolean {
  const program = asVim(given);
  if (VIM_NAMES.has(program)) return exValues(args).some((command) => !EX_READ_OR_PLAIN.test(command) && !isSearchOnly(command));
  if (program === 'make') return optionValues(args, ['--eval'], 'E').length > 0 || args.some((arg) => /^--eval=/.test(arg) || makeExpands(arg));
  if (program === 'tar') return args[0] !== undefined && /^[A-Za-z]+$/.test(args[0]) && /[IF]/.test(args[0]);
  // tmux: a format, a configuration file, a command that runs or types commands later (tmux-unread.ts).
  if (program === 'tmux') return wrapperCommand(program, args)?.unread === true;
  return false;
}


import { statSync } from 'node:fs';
import { basename, posix } from 'node:path';
import { hasHidden } from '../../display/index.js';
import { wordPlace, type ConfigPlaces } from './gateway-config.js';
import { belowHome, fromHome, readingLine, unplacedHome } from './home-path.js';
import { asWritten, landing, pathTags, placePath } from './sensitive-paths.js';
import { braceWords } from './brace-words.js';
import { extractionFolders } from './extract-folders.js';
import { globMatches, isGlob, MAX_GLOB_ENTRIES } from './glob-paths.js';
import { lineFolders, NO_OTHER_FOLDERS, type LineFolders } from './line-folders.js';
import { commandLineRun, envSplitString, findExecWords, MAX_NESTING, needsReading, programName, SHELLS, unreadable, withinBraces } from './nested-lines.js';
import { commandsRun, isLongOption, runsCommand, runsInPart, runsItsArgument } from './runs-command.js';
import { simpleCommands } from './shell-commands.js';
import { DANGER_TAGS, type DangerTag } from './types.js';
import { optionValuesOf, wrapperWords } from './wrapper-options.js';

/** Programs that run what they read: a pipe into one runs whatever came down the pipe. */
const RUNNERS = new Set([...SHELLS, 'python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'lua', 'deno', 'bun', 'osascript', 'pwsh', 'powershell']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'xh', 'lwp-request', 'ftp', 'tftp', 'nc', 'ncat', 'scp', 'rsync']);
const PRIVILEGE = new Set(['sudo', 'su', 'doas', 'pkexec', 'run0', 'sudoedit']);
/** Programs that run the command in their arguments: looked through to the command they run. */
const WRAPPERS = new Set(['env', 'nice', 'nohup', 'time', 'command', 'exec', 'xargs', 'timeout', 'stdbuf', 'ionice', 'chronic', 'builtin', 'caffeinate', 'watch', 'unbuffer', 'flock', 'busybox', 'toybox']);
/** The shell's own words before a command (`for …; do rm -rf ~; done`, `{ curl … | sh; }`): the program is the word after. */
const RESERVED = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'while', 'until', 'do', 'done', 'esac', 'coproc']);
/**
 * The programs a program the gateway cannot name (`$RM`, `/bin/r?`, `$(echo rm)`) is read as, for
 * its arguments' tags: it could be any of them. Errs toward tagging.
 */
const ANY_PROGRAM = ['rm', 'chmod', 'find', 'git', 'sh'];
/** Options whose value is a file the program writes (`curl -o`, `wget -O`, `git diff --output`, `cp -t`). */
const OUTPUT_OPTIONS = /^--(output|output-document|output-file|target-directory)(=|$)/;
/** Programs whose non-option arguments are (among others) files they write, or delete. */
const WRITERS = new Set(['rm', 'rmdir', 'unlink', 'tee', 'cp', 'mv', 'install', 'ln', 'touch', 'truncate', 'dd', 'sed', 'perl', 'rsync', 'chmod', 'chown', 'patch', 'mkfs', 'mke2fs', 'wipefs', 'shred']);
/** Programs whose arguments carry tags (`rm -r`, `git push -f`, `sh -c '…'`, `cp x ~/.bashrc`). */
const ARGUMENT_TAGGED = new Set(['rm', 'find', 'chmod', 'chown', 'chgrp', 'git', 'eval', ...SHELLS, ...WRITERS, ...DOWNLOADERS]);

/**
 * The danger tags of an approval, computed by the gateway from what would run or be written:
 * its shell commands as `shell-commands.ts` reads them, every path written resolved against the
 * asker's workspace, and hidden characters by the display rule. In the order of `DANGER_TAGS`.
 */
export function dangerTags(kind: 'exec' | 'write', commandOrPath: string, workspace: string | undefined, diffStat?: string, options: DangerOptions = {}): DangerTag[] {
  return dangerReading(kind, commandOrPath, workspace, diffStat, options).tags;
}

export interface DangerOptions {
  followLinks?: boolean;
  config?: ConfigPlaces | undefined;
}

/**
 * The danger tags (`tags`, as `dangerTags`) and those of them the gateway set only because it
 * could not read where the line reaches (`unsure`): `gateway-config` for `echo [] > $OUT`, `cd "$D"
 * && cp x chatty/*`, or a line merely holding a file's name (`python3 -c "…approvals.json…"`) may
 * reach the gateway's own files or may not; `cp x ~/.config/chatty/approvals.json` does. The
 * person is told which (a line that MAY write there is not said to write there).
 */
export function dangerReading(kind: 'exec' | 'write', commandOrPath: string, workspace: string | undefined, diffStat?: string, options: DangerOptions = {}): DangerReading {
  // A command line that sets HOME has no home the gateway can place (a write's path is read by no shell).
  return kind === 'exec' ? readingLine(commandOrPath, () => readDanger(kind, commandOrPath, workspace, diffStat, options)) : readDanger(kind, commandOrPath, workspace, diffStat, options);
}

/**
 * The tags, those of them the gateway is unsure of, and the command lines options and wrappers of
 * the line's own commands run (`tar --to-command='curl … | sh'`: tar runs `curl … | sh`), read for
 * their tags: named to the person, who would otherwise find them in the line themselves.
 */
export interface DangerReading {
  tags: DangerTag[];
  unsure: DangerTag[];
  runs: CommandRun[];
  /** How many other command lines they run past the `MAX_RUNS_NAMED` named (each once): said, so that the list is not taken for all. */
  runsMore: number;
}

/** A command line `program` runs from its words (an option's value, a wrapper's words). */
export interface CommandRun {
  program: string;
  line: string;
}

/** At most this many command lines run by options or wrappers are named to the person (the line holds them all). */
export const MAX_RUNS_NAMED = 8;

/**
 * Every command line a line's options and wrappers run, as its danger reading read them (`runs`
 * names the first `MAX_RUNS_NAMED` of them; these are all, within the same budget), and
 * `complete`: false when one was not read (past `INNER_CHARS_READ`, nested deeper than
 * `MAX_NESTING`, or a command run only in part, `runsInPart`): the reading tagged it
 * `unread-landing`. A deny rule is matched against each of them too (match.ts).
 */
export interface LinesRun {
  lines: string[];
  complete: boolean;
}

/** The last command line's `LinesRun`: a request's own reading comes just before its rules are matched. */
let lastLinesRun: { line: string; run: LinesRun } | undefined;

/** The command lines `line`'s options and wrappers run (`LinesRun`): the last request's, or read here (text only). */
export function linesRunBy(line: string): LinesRun {
  if (lastLinesRun?.line !== line) {
    const at = readingAt(undefined, {});
    readingLine(line, () => commandTags(line, at, new Set()));
    lastLinesRun = { line, run: linesRun(at) };
  }
  return lastLinesRun.run;
}

function linesRun(at: Where): LinesRun {
  return { lines: [...new Set(at.written.linesRead)], complete: !at.written.linesUnread };
}

function readDanger(kind: 'exec' | 'write', commandOrPath: string, workspace: string | undefined, diffStat: string | undefined, options: DangerOptions): DangerReading {
  const tags = new Set<DangerTag>();
  const at = readingAt(workspace, options);
  const config = at.config;
  if (kind === 'write') for (const tag of writeTags(commandOrPath, at)) tags.add(tag);
  else {
    commandTags(commandOrPath, at, tags);
    // Which lines are read depends on the text alone (not the workspace, links or files): a request's
    // reading (links followed; not a rule's own text, read for its tags meanwhile) is kept for the deny rules.
    if (at.followLinks) lastLinesRun = { line: commandOrPath, run: linesRun(at) };
    // A command line naming one of the files anywhere (an interpreter's code, a path from a folder it changed to, a variable's value).
    if (config?.namedIn(commandOrPath) === true) tags.add('gateway-config');
  }
  if (hasHidden(commandOrPath) || (diffStat !== undefined && hasHidden(diffStat))) tags.add('hidden-characters');
  return { tags: DANGER_TAGS.filter((tag) => tags.has(tag)), unsure: tags.has('gateway-config') && !at.written.configSurely ? ['gateway-config'] : [], runs: at.written.runs, runsMore: at.written.runsMore.size };
}

/** Where a reading starts: the request's workspace, nothing read yet, the whole budget. */
function readingAt(workspace: string | undefined, options: DangerOptions): Where {
  const config = options.config?.empty === false ? options.config : undefined;
  const written: Where['written'] = { read: new Map(), landingsLeft: MAX_LANDINGS_READ, globEntriesLeft: { entriesLeft: MAX_GLOB_ENTRIES }, configSurely: false, innerCharsLeft: INNER_CHARS_READ, runs: [], runsMore: new Set(), linesRead: [], linesUnread: false };
  return { workspace, followLinks: options.followLinks === true, config, depth: 0, named: false, written, folders: NO_OTHER_FOLDERS };
}

function commandTags(line: string, at: Where, tags: Set<DangerTag>): void {
  // `eval eval eval …` 3,000 deep overflowed the stack: the approval failed with no audit row. Deeper
  // than that is not read, so what it runs or writes is not known: it fails closed, as a path not followed does.
  if (at.depth > MAX_NESTING) {
    tags.add('unread-landing');
    at.written.linesUnread = true;
    return;
  }
  const commands = simpleCommands(line);
  // The folders its relative words may be read from (`cd .. && cp x .config/chatty/*`, `cd d && cp x notes.txt`): for every
  // path tag of a request (a rule's own text is read as written, from the workspace only).
  if (at.config !== undefined || at.followLinks) at = { ...at, folders: lineFolders(commands, at.workspace, at.folders) };
  let downloads = false;
  let runs = false;
  for (const command of commands) {
    for (const target of command.writes) if (!isDevice(target)) addAll(tags, shellWriteTags(target, at));
    // Any program may write a file it is given (`python3 edit.py approvals.json`, `git checkout -- plugins.lock`): a word naming one of the gateway's own files is enough.
    if (at.config !== undefined) configTag([namesConfig(command.words, at.config, at.workspace), namesFromOtherFolders([...command.words, ...command.writes], at.config, at.folders)], at, tags);
    const seen = lookThrough(command.words, tags, at);
    if (seen.program === undefined) continue;
    // A program named by a variable, a glob, a substitution or a brace expansion could be any: read as each.
    const programs = unreadable(seen.program) ? ANY_PROGRAM : [seen.program];
    // `{rm,-rf,~}`: bash makes words of the braces' parts, the first the program, the others its arguments.
    const args = unreadable(seen.program) ? [...braceParts(seen.program).slice(1), ...seen.args] : seen.args;
    for (const program of programs) {
      if (DOWNLOADERS.has(program)) downloads = true;
      if (RUNNERS.has(program) || program === 'eval' || program === 'source' || program === '.') runs = true;
      if (command.stage > 0 && RUNNERS.has(program)) tags.add('pipe-to-shell');
      programTags(program, args, at, tags);
    }
  }
  if (downloads && runs) tags.add('download-and-run');
}

/** The parts of a word's outermost braces (`{rm,-rf,~}`: rm, -rf, ~), at most 64; none without braces. */
function braceParts(word: string): string[] {
  return withinBraces(word)?.split(',', 64) ?? [];
}

/** Skips environment assignments, privilege and wrapper programs (tagging privilege) to the program that runs. */
function lookThrough(given: readonly string[], tags: Set<DangerTag>, at: Where): { program?: string; args: string[] } {
  const words = [...given]; // `env -Sx`'s glued string is put in its word's place
  let i = 0;
  // From which word on no word needs a second reading by `eval` (a space, an operator, a quote, `$`):
  // `eval eval … rm -rf x` is then flat, not thousands of lines deep.
  let plainFrom = words.length;
  while (plainFrom > 0 && !needsReading(words[plainFrom - 1]!)) plainFrom--;
  for (;;) {
    while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || RESERVED.has(words[i]!))) i++;
    if (i >= words.length) return { args: [] };
    // Lower case: on macOS (a file system that ignores case) `RM` runs /bin/rm.
    const program = programName(words[i]!);
    // `nice x`, `sudo x`, `env A=1 x`: a command run from its words (the one it runs is read on as the program).
    if (runsItsArgument(program, words[i + 1])) tags.add('runs-command');
    if (program === 'eval' && i + 1 >= plainFrom) {
      i++;
      continue;
    }
    if (program === 'function') {
      i += 2; // `function name { … }`: the body follows
      continue;
    }
    if (PRIVILEGE.has(program)) {
      tags.add('privilege');
      // `su [user] -c '…'`: among its first words (a line of `sudo sudo …` stays linear).
      const inner = program === 'su' ? commandLineRun(words, i) : undefined;
      if (inner !== undefined) commandTags(inner, deeper(at), tags);
      alsoReadAsPrograms(words, i, tags, at);
      i++;
      // Its options, and the value of those that take one (`sudo -u deploy`).
      while (i < words.length && words[i]!.startsWith('-')) i += /^-[ugCDhprtTU]$|^-(c)$/.test(words[i]!) ? 2 : 1;
      continue;
    }
    if (program === 'env') {
      // `env -S 'rm -rf ~'`: the string is split into the command it runs.
      const split = envSplitString(words, i);
      if (split !== undefined && split.value !== '' && !needsReading(split.value) && !split.value.startsWith('-')) {
        // One word split is that word: read on in this line (`env -S env -S …` stays linear, where
        // reading each string again as a line of its own read the rest of the line once per `env`).
        // An option (`env -S-i rm …`) is env's again, and an empty string no word (`env -S '' rm …`
        // runs rm: the empty word was the program): read below, as the line env goes on with.
        if (split.glued) words[split.index] = split.value;
        i = split.index;
        continue;
      }
      if (split !== undefined) {
        commandTags(commandLineRun(words, i) ?? '', deeper(at), tags);
        return { args: [] };
      }
    }
    if (WRAPPERS.has(program)) {
      alsoReadAsPrograms(words, i, tags, at);
      // watch joins its words for `sh -c`: a word of it may be several commands (`watch 'curl … | sh'`).
      if (program === 'watch') readInner(program, commandsRun(program, words.slice(i + 1)), at, tags);
      // Its options as its getopt reads them (`stdbuf -o L`, `nice --adjustment 5`, `timeout 5`, `flock lock`): the command after.
      const read = wrapperWords(program, words, i);
      // flock's `-c` is a command line it runs; GNU time's `-o` the file it writes.
      if (program === 'flock') readInner(program, optionValuesOf(read, 'c', '--command'), at, tags);
      if (program === 'time') for (const target of optionValuesOf(read, 'o', '--output')) if (!isDevice(target)) addAll(tags, shellWriteTags(target, at));
      i = read.command;
      continue;
    }
    return { program, args: words.slice(i + 1) };
  }
}

/**
 * The words just after a wrapper at `wrapper`, each read as the program it runs too: an option
 * that takes a value this reader does not know of (`xargs -P 4 rm`, `flock lock rm`, `exec -a
 * name rm`) would otherwise have its value taken for the program. A few words only: options come first.
 */
function alsoReadAsPrograms(words: string[], wrapper: number, tags: Set<DangerTag>, at: Where): void {
  for (let j = wrapper + 1; j < Math.min(words.length, wrapper + 8); j++) {
    const program = programName(words[j]!);
    // Only a program whose arguments carry tags, and its first words: a long line of wrappers stays linear.
    if (!words[j]!.startsWith('-') && (ARGUMENT_TAGGED.has(program) || program.startsWith('mkfs.'))) programTags(program, words.slice(j + 1, j + 65), at, tags);
  }
}

function programTags(program: string, args: string[], at: Where, tags: Set<DangerTag>): void {
  const short = (letter: string): boolean => args.some((a) => /^-[A-Za-z]+$/.test(a) && a.includes(letter));
  const long = (...names: string[]): boolean => args.some((a) => names.some((n) => isLongOption(a, n)));
  if (program === 'rm' && (short('r') || short('R') || long('--recursive'))) tags.add('recursive-delete');
  if (program === 'find' && args.includes('-delete')) tags.add('recursive-delete');
  if ((program === 'chmod' || program === 'chown' || program === 'chgrp') && (short('R') || long('--recursive'))) tags.add('recursive-chmod');
  // `sh -c '…'`, `bash -ec '…'`, `trap '…' EXIT`: the string is a command line of its own; `eval` runs its words
  // joined and read again (an `eval` whose words need no second reading is looked through as a wrapper).
  if (SHELLS.has(program) || program === 'eval' || program === 'trap') {
    const inner = commandLineRun([program, ...args], 0);
    if (inner !== undefined) commandTags(inner, deeper(at), tags);
  }
  if (program === 'find') {
    const exec = findExecWords(args);
    if (exec !== undefined) {
      const seen = lookThrough(exec, tags, at);
      if (seen.program !== undefined) programTags(seen.program, seen.args, at, tags);
    }
  }
  if (program === 'git') gitTags(args, tags);
  // `tar --to-command=…`, `git -c core.pager=…`, `awk 'BEGIN{system(…)}'`: no prefix rule names the command it runs.
  if (runsCommand(program, args)) tags.add('runs-command');
  // What it runs is read as a line of its own (`tar --to-command='curl … | sh'` is download-and-run too).
  readInner(program, commandsRun(program, args), at, tags);
  // A value that is a command only in part (`vim -c 'silent !…'`, `make --eval=…`) is not read: what it runs is not known.
  if (runsInPart(program, args)) {
    tags.add('unread-landing');
    at.written.linesUnread = true;
  }
  // An archive or patch unpacked into a folder that holds one of the gateway's files (`tar xf x.tar -C ~`), the workspace and above too.
  if (at.config !== undefined) configTag([unpacksOntoConfig(extractionFolders(program, args), at.config, at)], at, tags);
  for (const target of optionWrites(program, args)) if (!isDevice(target)) addAll(tags, shellWriteTags(target, at));
  if (INTO_FOLDER.has(program)) for (const target of intoFolderTargets(program, args, at)) addAll(tags, shellWriteTags(target, at));
  if (WRITERS.has(program) || program.startsWith('mkfs.')) {
    for (const arg of args) {
      if (arg.startsWith('-')) continue;
      const target = program === 'dd' ? /^of=(.*)$/.exec(arg)?.[1] : arg;
      if (target !== undefined && !isDevice(target)) addAll(tags, shellWriteTags(target, at).filter((t) => t !== 'outside-workspace' || program !== 'chmod'));
    }
  }
}

/**
 * Reads each command line a program runs from its words as a line of its own, its tags merged,
 * within the request's budget (`INNER_CHARS_READ`). Past it, what that line runs or writes is not
 * known: `unread-landing`, which no rule approves and nothing is offered for (64 `setsid true;`
 * before `setsid rm -rf ~` hid its tags, and offered "always").
 */
function readInner(program: string, lines: readonly string[], at: Where, tags: Set<DangerTag>): void {
  for (const inner of lines) {
    // The line's own commands', and those of lines it runs unnamed (`sh -c "tar --to-command=…"`); not
    // inside a line named already (`setsid tar --to-command=…`: setsid's line shows tar's option). Each once.
    const runs = at.written.runs;
    if (!at.named && !runs.some((run) => run.line === inner)) {
      // Past the named ones, counted (each line once; a line is part of the command, so the set is bounded by it).
      if (runs.length < MAX_RUNS_NAMED) runs.push({ program, line: inner });
      else at.written.runsMore.add(inner);
    }
    at.written.innerCharsLeft -= Math.max(64, inner.length); // at most 64 readings
    if (at.written.innerCharsLeft >= 0) {
      at.written.linesRead.push(inner);
      commandTags(inner, { ...deeper(at), named: true }, tags);
    } else {
      tags.add('unread-landing');
      at.written.linesUnread = true;
    }
  }
}

/** `git [global options] <subcommand> …`: force pushes and history rewrites. */
function gitTags(args: string[], tags: Set<DangerTag>): void {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) i += /^-[Cc]$|^--(git-dir|work-tree|namespace|exec-path|config-env)$/.test(args[i]!) ? 2 : 1;
  const sub = args[i];
  const rest = args.slice(i + 1);
  const short = (letter: string): boolean => rest.some((a) => /^-[A-Za-z]+$/.test(a) && a.includes(letter));
  const long = (...names: string[]): boolean => rest.some((a) => names.some((n) => isLongOption(a, n)));
  // A deleted remote branch (`--delete`, `-d`, `:main`) loses its history as a forced one does.
  const forced = short('f') || short('d') || long('--force', '--force-with-lease', '--force-if-includes', '--mirror', '--delete');
  if (sub === 'push' && (forced || rest.some((a) => a.startsWith('+') || /^:./.test(a)))) tags.add('force-push');
  if (sub === 'reset' && long('--hard')) tags.add('history-rewrite');
  if (sub === 'rebase' || sub === 'filter-branch' || sub === 'filter-repo') tags.add('history-rewrite');
  if (sub === 'clean' && short('f') && short('d')) tags.add('recursive-delete');
}

/** Where the paths of a request are placed: against the asker's workspace; following links for a request (not for a rule's own text). */
interface Where {
  workspace: string | undefined;
  followLinks: boolean;
  /** The gateway's own configuration files (`gateway-config`), for a request; never for a rule's own text. */
  config: ConfigPlaces | undefined;
  /** How many command lines deep (`sh -c '…'` inside `eval …`): bounded, so no line can overflow the stack. */
  depth: number;
  /** Read within a line named to the person as one a program may run (`runs`): what runs inside it is in view there. */
  named: boolean;
  /**
   * The tags of each path written, as read so far (`$a $a …` is read as rm's and chmod's, each
   * path once), and how many more may be followed to where they land: shared by the whole request.
   */
  written: {
    read: Map<string, DangerTag[]>;
    landingsLeft: number;
    globEntriesLeft: { entriesLeft: number };
    configSurely: boolean;
    innerCharsLeft: number;
    runs: CommandRun[];
    runsMore: Set<string>;
    /** Every line read by `readInner` (`LinesRun`), and whether one a program runs went unread. */
    linesRead: string[];
    linesUnread: boolean;
  };
  /** The folders other than the workspace a command line may have changed to (`cd ..`): read for the gateway's own files only. */
  folders: LineFolders;
}

/**
 * How a line reaches one of the gateway's own files: `surely` (a word or a written path is one,
 * or a folder holding one), `maybe` (a path the gateway cannot read could be one: a variable, a
 * folder it cannot place, a name in an interpreter's code), or not at all.
 */
type Reach = 'surely' | 'maybe' | false;

/** Tags `gateway-config` when any of `reaches` does, and records whether one surely does (`written.configSurely`). */
function configTag(reaches: readonly Reach[], at: Where, tags: Set<DangerTag>): void {
  if (reaches.includes('surely')) at.written.configSurely = true;
  if (reaches.some((reach) => reach !== false)) tags.add('gateway-config');
}

/**
 * At most this many written paths of one request are followed to where they land (a few
 * realpaths each): `$a $a …` is 5,461 paths under the cap, 0.3-1.3 s of main thread read all.
 */
export const MAX_LANDINGS_READ = 64;

/**
 * The characters of the command lines options and wrappers run (`commandsRun`) read in all for
 * one request: more than any line of a person's reading holds, and a line of nested wrappers
 * (`setsid setsid … x`, each level one reading of the rest) stops there (it is runs-command already).
 */
const INNER_CHARS_READ = 4_096;

function deeper(at: Where): Where {
  return { ...at, depth: at.depth + 1 };
}

/**
 * The tags of a write to `target`: of its text and, when links are followed, of where it lands
 * (`hooks -> .git/hooks`). A target bash makes several words of (`{a,.config/x}`) is each of them.
 */
function writeTags(target: string, at: Where): DangerTag[] {
  let tags = at.written.read.get(target);
  if (tags !== undefined) return tags;
  const each = braceWords(target);
  if (each === undefined) tags = [...new Set<DangerTag>([...pathTags(target, at.workspace), 'unread-landing', ...(at.config !== undefined ? ['gateway-config' as const] : [])])];
  else if (each.length > 1) tags = [...new Set(each.flatMap((word) => oneWriteTags(word, at)))];
  else tags = oneWriteTags(target, at);
  at.written.read.set(target, tags);
  return tags;
}

/**
 * The tags of a path a command writes (a redirection, a writer's argument, an output option):
 * `writeTags`, and `gateway-config` when the shell builds it at run time (`> $OUT`, `> "$(cat
 * f)"`, a backtick: the gateway never expands a variable with its own environment, so it could be
 * any file, the rules file too). A write request's path is a name as it is: no shell reads it.
 */
function shellWriteTags(target: string, at: Where): DangerTag[] {
  const tags = new Set([...writeTags(target, at), ...fromOtherFolders(target, at)]);
  if (at.config !== undefined && /[$`]/.test(target) && fromHome(target) === undefined) tags.add('gateway-config');
  return [...tags];
}

/**
 * The tags of a relative write target read from each folder the line may have changed to (`cd d
 * && cp x notes.txt` writes `d/notes.txt`): where it lands there, a hard link there. From a folder
 * the gateway cannot place (`cd "$D"`, `popd`) it could land anywhere: `unread-landing`.
 */
function fromOtherFolders(target: string, at: Where): DangerTag[] {
  if (target === '' || target.startsWith('/') || fromHome(target) !== undefined || /[$`]/.test(target)) return [];
  if (at.folders.unknown) return ['unread-landing'];
  return at.folders.known.flatMap((folder) => writeTags(`${folder}/${target}`, at));
}

/** Programs that copy or move their sources into a folder given last (or by `-t`): each writes `folder/<source's name>`. */
const INTO_FOLDER = new Set(['cp', 'mv', 'install', 'ln', 'rsync']);

/**
 * The files `cp a b d/` (or `cp -t d a b`) writes when its destination is a folder: `d/a`, `d/b`
 * (a source's last name; `rsync src/` copies what src holds: `d/*`). The destination is taken for
 * a folder when it ends with `/`, is one on disk from the workspace or a folder the line changed
 * to, or may be (a folder the gateway cannot place). Folders copied whole (`cp -r src d/`) are
 * judged by their top name only: the files below them are not walked.
 */
function intoFolderTargets(program: string, args: readonly string[], at: Where): string[] {
  const plain = args.filter((arg) => !arg.startsWith('-'));
  const option = optionWrites(program, [...args]).at(0);
  const folder = option ?? plain.at(-1);
  const sources = option !== undefined ? plain.filter((arg) => arg !== option) : plain.slice(0, -1);
  if (folder === undefined || sources.length === 0 || !isFolderTarget(folder, at)) return [];
  const base = folder.replace(/\/+$/, '') || '/';
  return sources.slice(0, MAX_LANDINGS_READ).map((source) => {
    const name = /\/$/.test(source) && program === 'rsync' ? '*' : basename(source.replace(/\/+$/, '')) || '*';
    return `${base === '/' ? '' : base}/${name}`;
  });
}

/** Whether a write target names a folder (see `intoFolderTargets`). */
function isFolderTarget(target: string, at: Where): boolean {
  if (target.endsWith('/') || target === '.' || target === '..') return true;
  if (!at.followLinks) return false;
  if (at.folders.unknown && !target.startsWith('/') && fromHome(target) === undefined) return true;
  const home = fromHome(target);
  const places = home !== undefined || target.startsWith('/') ? [home ?? target] : [at.workspace, ...at.folders.known].flatMap((folder) => (folder !== undefined ? [`${folder}/${target}`] : []));
  return places.some((place) => {
    try {
      return statSync(place).isDirectory();
    } catch {
      return false;
    }
  });
}

function oneWriteTags(target: string, at: Where): DangerTag[] {
  let tags = pathTags(target, at.workspace);
  // Another user's home the gateway cannot place (`~bob/x`): outside, and where it lands is not read.
  if (unplacedHome(target)) return [...new Set<DangerTag>([...tags, 'unread-landing', ...(at.config !== undefined && at.config.reachedFromAnyFolder(belowHome(target)) ? ['gateway-config' as const] : [])])];
  // `~/x` too: the gateway's own home (the user's), so that a write there is followed to where it lands.
  const placed = at.followLinks ? (placePath(target, at.workspace).path ?? fromHome(target)) : undefined;
  // The gateway's own files, or a folder holding one: as asked here (a glob: any it could match), where the links take it below.
  if (placed !== undefined && at.config?.reaches(placed) === true) {
    tags = [...tags, 'gateway-config'];
    at.written.configSurely = true;
  }
  if (placed !== undefined && at.written.landingsLeft <= 0) {
    // Past the budget, where it lands is not read: it could be anywhere. A tag of its own, which no
    // filter drops (chmod's drops outside-workspace) and no rule names (`cp /tmp/x *` names outside-workspace): a person is asked.
    tags = [...new Set<DangerTag>([...tags, 'unread-landing'])];
  } else if (placed !== undefined && isGlob(target)) {
    // A glob writes the files it matches (`cp x k*.txt`): each is judged; too many to read, or unreadable, fails closed.
    at.written.landingsLeft--;
    const matches = globMatches(asWritten(target, at.workspace) ?? placed, at.written.globEntriesLeft);
    if (matches === undefined) tags = [...new Set<DangerTag>([...tags, 'unread-landing'])];
    else for (const match of matches) tags = [...new Set([...tags, ...oneWriteTags(match, at)])];
  } else if (placed !== undefined) {
    at.written.landingsLeft--;
    const lands = landing(asWritten(target, at.workspace) ?? placed);
    // Not read (a `..` after a part that does not exist or cannot be read): a person is asked, no rule approves it.
    if (lands === undefined) tags = [...new Set<DangerTag>([...tags, 'unread-landing'])];
    else if (lands !== placed) tags = [...new Set([...tags, ...pathTags(lands, at.workspace)])];
    // Where it lands, or a second name of one (a hard link: the same inode under another path).
    if (lands !== undefined && (at.config?.reaches(lands) === true || at.config?.isSecondName(lands) === true)) {
      tags = [...new Set<DangerTag>([...tags, 'gateway-config'])];
      at.written.configSurely = true;
    }
    // A file with another name: the write changes it there too (`ln ~/.ssh/authorized_keys notes.txt`), wherever that is.
    if (lands !== undefined && hasOtherNames(lands)) tags = [...new Set<DangerTag>([...tags, 'hard-link'])];
  }
  return tags;
}

/**
 * Whether the regular file at `path` (links followed) has more than one name (`st_nlink > 1`).
 * Its other names cannot be found (no index of them), so the tag says so rather than where.
 */
function hasOtherNames(path: string): boolean {
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.nlink > 1;
  } catch {
    return false; // nothing there yet: created with one name
  }
}

/** The files named by the options that say where a program writes: `curl -o F`, `-oF`, `wget -O F`, `--output=F`, `cp -t DIR`, `sort -oF`. */
function optionWrites(program: string, args: string[]): string[] {
  const letters = DOWNLOADERS.has(program) ? 'oO' : ['cp', 'mv', 'ln', 'install'].includes(program) ? 't' : program === 'sort' ? 'o' : '';
  const targets: string[] = [];
  args.forEach((arg, i) => {
    const long = OUTPUT_OPTIONS.exec(arg);
    if (long) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[i + 1];
      if (value !== undefined) targets.push(value);
      return;
    }
    if (letters === '' || !/^-[A-Za-z]/.test(arg)) return;
    const at = [...arg.slice(1)].findIndex((c) => letters.includes(c));
    if (at < 0) return;
    const glued = arg.slice(at + 2);
    const value = glued !== '' ? glued : args[i + 1];
    if (value !== undefined) targets.push(value);
  });
  return targets;
}

function isDevice(target: string): boolean {
  return /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/.test(target) || /^&?\d+$/.test(target);
}

/**
 * Whether a word of a command names one of the gateway's own files (read as written, so no link
 * is followed): every word, the value glued to an option (`-o.config/…`, `--file=…`), each word
 * of its braces, a glob by any file it could match. A folder holding one counts too (`tar -C
 * .config/chatty`), unless it is the workspace or a folder above it (`grep -r x .` writes nothing).
 */
function namesConfig(words: readonly string[], config: ConfigPlaces, workspace: string | undefined): Reach {
  const reaches = words.flatMap((word): Reach[] => {
    // `--out=x`, `-ox`, and a variable set to it (`X=~/.config/chatty/approvals.json; cp y $X`: bash expands `~` after the `=`).
    const glued = /^--[^=]+=(.+)$/.exec(word)?.[1] ?? /^[A-Za-z_][A-Za-z0-9_]*\+?=(.+)$/.exec(word)?.[1] ?? /^-[A-Za-z0-9](.+)$/.exec(word)?.[1];
    return [word, ...(glued !== undefined ? [glued] : [])].flatMap((text): Reach[] => {
      const each = braceWords(text);
      if (each === undefined) return ['maybe']; // could be any word
      return each.map((one): Reach => {
        // `~bob/.config/chatty/x` for a user the gateway cannot place: from any folder.
        if (unplacedHome(one)) return config.reachedFromAnyFolder(belowHome(one)) && 'maybe';
        const place = wordPlace(one, workspace);
        if (place === undefined) return false;
        const above = workspace !== undefined && (place === workspace || workspace.startsWith(place === '/' ? '/' : `${place}/`));
        return (above ? config.names(place) : config.reaches(place)) && 'surely';
      });
    });
  });
  return strongest(reaches);
}

/** The surest of several readings: `surely` over `maybe` over none. */
function strongest(reaches: readonly Reach[]): Reach {
  return reaches.includes('surely') ? 'surely' : reaches.includes('maybe') && 'maybe';
}

/**
 * Whether a word, or a write target, of a command names one of the gateway's files from a folder
 * the line may have changed to (`cd sub && cp x ../.config/chatty/*`), or could, from a folder the
 * gateway cannot place (`cd "$D" && cp x chatty/*`). Read as written, as `namesConfig`.
 */
function namesFromOtherFolders(words: readonly string[], config: ConfigPlaces, folders: LineFolders): Reach {
  if (folders.known.length === 0 && !folders.unknown) return false;
  const relative = words.filter((word) => word !== '' && !word.startsWith('-') && !isAbsoluteWord(word));
  if (folders.unknown) return relative.some((word) => (braceWords(word) ?? ['*']).some((one) => config.reachedFromAnyFolder(one))) && 'maybe';
  return strongest(folders.known.map((folder) => namesConfig(relative, config, folder)));
}

/**
 * Whether any of `folders` (as written; relative ones from the workspace and each folder the line
 * changed to) is one of the gateway's files or holds one. A relative folder read from a folder the
 * gateway cannot place could be any: counted.
 */
function unpacksOntoConfig(folders: readonly string[] | undefined, config: ConfigPlaces, at: Where): Reach {
  if (folders === undefined) return false;
  return strongest(
    folders.flatMap((folder): Reach[] => {
      if (/[$`]/.test(folder) && fromHome(folder) === undefined) return ['maybe']; // built at run time: any folder
      const each = braceWords(folder);
      if (each === undefined) return ['maybe'];
      return each.map((one): Reach => {
        if (!isAbsoluteWord(one) && at.folders.unknown) return 'maybe';
        const bases = isAbsoluteWord(one) ? [at.workspace] : [at.workspace, ...at.folders.known];
        return bases.some((base) => {
          const place = wordPlace(one, base);
          return place !== undefined && config.reaches(place);
        }) && 'surely';
      });
    }),
  );
}

/** An absolute path or a home spelling: the same from any folder. */
function isAbsoluteWord(word: string): boolean {
  return word.startsWith('/') || fromHome(word) !== undefined || unplacedHome(word);
}

function addAll(into: Set<DangerTag>, tags: readonly DangerTag[]): void {
  for (const tag of tags) into.add(tag);
}

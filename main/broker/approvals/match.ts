import { isAbsolute, posix, relative } from 'node:path';
import { dangerTags, linesRunBy } from './danger.js';
import { asWritten, landing, placePath } from './sensitive-paths.js';
import { everyCommandRun, programName, unreadable, type CommandsRun } from './nested-lines.js';
import { RUNS_OTHER_PROGRAMS } from './runs-command.js';
import { isSimpleCommand, simpleCommands } from './shell-commands.js';
import type { ApprovalMatch, DangerTag } from './types.js';

/** What a match is checked against: the request as the gateway placed it. */
export interface MatchSubject {
  kind: 'exec' | 'write';
  command_or_path: string;
  workspace?: string | undefined;
  /** A write's absolute path. */
  path?: string | undefined;
}

/** Programs whose second word is a subcommand: `npm test *`, `git status *`. */
const SUBCOMMAND_TOOLS = new Set([
  'npm', 'pnpm', 'yarn', 'bun', 'deno', 'git', 'cargo', 'go', 'docker', 'podman', 'kubectl', 'pip', 'pip3', 'uv', 'poetry',
  'make', 'gradle', 'mvn', 'dotnet', 'gh', 'brew', 'terraform', 'helm', 'swift', 'rustup', 'composer', 'mix', 'bundle', 'rake', 'just', 'nx', 'turbo',
]);

/** How a match reads to a person: `npm test` exactly, `npm test *`, `src/**`. */
export function describeMatch(match: ApprovalMatch): string {
  if ('exact' in match) return match.exact;
  if ('prefix' in match) return `${match.prefix} *`;
  return match.glob;
}

/**
 * Whether an allow `match` covers where a write lands through links (`lands`, when that is
 * another path than the one asked): only a glob that also matches the landing does. A person who
 * remembered `src/*` or `src/gen.ts` saw a path in `src/`; a link (committed to the branch, or made
 * since) that takes `src/gen.ts` to `../package.json` lands out of what they approved, with no tag
 * to say so (it stays in the workspace).
 */
export function coversLanding(match: ApprovalMatch, subject: MatchSubject & { lands?: string | undefined }): boolean {
  if (subject.kind !== 'write' || subject.lands === undefined) return true;
  return 'glob' in match && matches(match, { ...subject, path: subject.lands });
}

/** Whether `match` covers the request. */
export function matches(match: ApprovalMatch, subject: MatchSubject): boolean {
  if ('exact' in match) return subject.command_or_path === match.exact;
  if ('prefix' in match) {
    if (subject.kind !== 'exec') return false;
    const want = isSimpleCommand(match.prefix);
    const have = isSimpleCommand(subject.command_or_path);
    return want !== undefined && have !== undefined && want.length <= have.length && want.every((word, i) => have[i] === word);
  }
  if (subject.kind !== 'write' || subject.path === undefined) return false;
  const pattern = isAbsolute(match.glob) || subject.workspace === undefined ? match.glob : undefined;
  if (pattern !== undefined) return globMatches(match.glob, subject.path);
  const rel = relative(subject.workspace!, subject.path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false; // a relative glob stays in the workspace
  return globMatches(match.glob, rel);
}

/**
 * Whether a **deny** rule's `match` covers the request. It errs toward denying: a deny rule must
 * not be stepped around by writing what it denies another way (under `--approvals allow` it is
 * all that stands in the way).
 *
 * - A prefix covers every command line that runs it anywhere (`cd x && git push`, `sudo git
 *   push`, `git -C x push`, `$(git push)`, `sh -c 'git push'`, `eval "git push"`): its program
 *   (by name, wherever it lives, in any case) followed, in order, by its other words.
 * - An exact command covers the line that runs each of its simple commands anywhere, however
 *   quoted or spaced (`make 'deploy'`, `cd x && make deploy`, `env A=1 make deploy`): the same
 *   words, ending the simple command, the program by name in any case.
 * - An exact path or a glob covers the write however its path is spelled (`./x`, `x//y`,
 *   `a/../x`, absolute), in any case (macOS and Windows file systems ignore it), as asked and
 *   where it lands through a linked folder.
 */
export function denies(match: ApprovalMatch, subject: MatchSubject): boolean {
  return deniedBy(match, subject) === 'denied';
}

/**
 * What a **deny** rule's `match` makes of the request: `denied` (it covers the request, read as
 * `denies` says), `maybe` (a command whose program or words the gateway cannot read, a variable
 * or a substitution, `$(echo make) deploy`, `make $T`, or a line too nested to read whole, could
 * be what it denies: the person must be asked, no rule or mode may approve it), or false.
 * Redirections are no words (`make deploy 2>&1`, `</dev/null`), and the command lines a command
 * runs from its arguments are read (`sh -c '…'`, `eval …`, `su -c`, `env -S`), and those its
 * wrappers and options run (`tmux new -d '…'`, `ssh host '…'`, `tar --to-command='…'`): one the
 * danger reading did not read (its budget, `vim -c 'call system(…)'`) is `maybe` for any rule.
 */
export function deniedBy(match: ApprovalMatch, subject: MatchSubject): 'denied' | 'maybe' | false {
  if (matches(match, subject)) return 'denied';
  if (subject.kind === 'exec') {
    if (!('prefix' in match) && !('exact' in match)) return false;
    const run = readOnce(subject.command_or_path);
    // An exact rule of several commands (`make build && make deploy`) covers a line running each one.
    const wanted = 'prefix' in match ? [isSimpleCommand(match.prefix)] : simpleCommands(match.exact).map(({ words }) => words);
    if (wanted.length === 0 || wanted.some((want) => want === undefined || want.length === 0)) return false;
    const runs = (reading: 'exactly' | 'unread'): boolean =>
      wanted.every((want) => run.commands.some(({ words }) => ('prefix' in match ? runsPrefix(words, want!, reading) : endsWithCommand(words, want!, reading))));
    if (runs('exactly')) return 'denied';
    return !run.complete || runs('unread') || run.commands.some(({ words }) => definesAlias(words)) ? 'maybe' : false;
  }
  if ('prefix' in match) return false;
  const paths = writtenPaths(subject);
  if (paths.some((path) => path !== undefined && ('exact' in match ? sameText(deniedPath(match.exact, subject.workspace), path) : deniedGlob(match.glob, path, subject.workspace)))) return 'denied';
  return paths.includes(undefined) ? 'maybe' : false; // where it lands was not read: it could be what the rule denies
}

/**
 * The last command line read, kept: a request is checked against every rule in turn, and each
 * read the whole line again (a 16 Ki line of 8,192 commands against 10 deny rules: 0.5 s).
 */
let lastRead: { line: string; run: CommandsRun } | undefined;
function readOnce(line: string): CommandsRun {
  if (lastRead?.line !== line) lastRead = { line, run: withLinesRun(line) };
  return lastRead.run;
}

/**
 * The simple commands of `line` and of every command line its wrappers and options run, as the
 * danger reading found them (`tmux new -d 'rm -rf ~'`, `ssh host 'rm -rf ~'`, `tar
 * --to-command='…'`, `git -c core.pager='…'`: the request's `runs`, all of them), each line read
 * as `everyCommandRun` reads one, within one budget for them all. Not complete when a line a
 * program runs was not read (past the danger reading's budget, too nested, run only in part:
 * `vim -c 'call system(…)'`, `tmux send-keys`): it could run what a rule denies.
 */
function withLinesRun(line: string): CommandsRun {
  const own = everyCommandRun(line);
  const wrapped = linesRunBy(line);
  if (wrapped.lines.length === 0) return wrapped.complete ? own : { commands: own.commands, complete: false };
  const budget = { left: 4 * wrapped.lines.reduce((sum, inner) => sum + inner.length, 0) + 4_096 };
  const inner = wrapped.lines.map((text) => everyCommandRun(text, budget));
  return {
    commands: [...own.commands, ...inner.flatMap((run) => run.commands)],
    complete: own.complete && wrapped.complete && inner.every((run) => run.complete),
  };
}

/** `GIT` is git on macOS, `/usr/bin/git` is git. */
function sameProgram(word: string, program: string): boolean {
  return programName(word) === programName(program);
}

/**
 * Wrappers, options and assignments before a command's program (`env A=1 nice -n 5 make`): the
 * program is the first word after them. Only for the `unread` reading, where the program's place matters.
 */
function programAt(words: readonly string[]): number {
  let at = 0;
  while (at < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=|^-/.test(words[at]!) || RUNS_OTHER_PROGRAMS.has(programName(words[at]!)) || SHELL_WORDS.has(words[at]!))) at++;
  return at;
}
const SHELL_WORDS = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'while', 'until', 'do', 'done', 'esac', 'coproc']);

/**
 * Whether `words` end with the command `want` (its program by name, the other words as they
 * are). `unread`: the command's program (after its wrappers) is the rule's or cannot be read,
 * and its words after it could be the rule's, each unreadable word standing for any words.
 */
function endsWithCommand(words: readonly string[], want: readonly string[], reading: 'exactly' | 'unread'): boolean {
  if (reading === 'exactly') {
    const at = words.length - want.length;
    return at >= 0 && sameProgram(words[at]!, want[0]!) && want.every((word, i) => i === 0 || words[at + i] === word);
  }
  return couldRun(words, want, 'whole');
}

/**
 * The `unread` reading of both rules: the command's program (after its wrappers) is the rule's or
 * cannot be read, and the words it runs could be the rule's other words (`how`, as `wildcardMatch`).
 */
function couldRun(words: readonly string[], want: readonly string[], how: 'whole' | 'in order'): boolean {
  const at = programAt(words);
  if (at >= words.length) return false;
  if (unreadable(programName(words[at]!))) return true; // `$(echo make) deploy`: could be anything (`$HOME/bin/tool` is tool)
  return sameProgram(words[at]!, want[0]!) && wildcardMatch(argumentsRun(words, at), want.slice(1), how);
}

/**
 * Whether the command defines an alias (`alias m=make`): a later line's `m deploy` runs `make
 * deploy` (dash always, bash with `expand_aliases`), and aliases are not expanded here.
 */
function definesAlias(words: readonly string[]): boolean {
  const at = programAt(words);
  return at < words.length && programName(words[at]!) === 'alias' && words.slice(at + 1).some((word) => word.includes('='));
}

/** Whether `words` run the program of `want` followed, in order, by its other words; `unread` as for `endsWithCommand`. */
function runsPrefix(words: readonly string[], want: readonly string[], reading: 'exactly' | 'unread'): boolean {
  if (reading === 'exactly') {
    return words.some((word, at) => {
      if (!sameProgram(word, want[0]!)) return false;
      let next = 1;
      for (let later = at + 1; later < words.length && next < want.length; later++) if (words[later] === want[next]) next++;
      return next === want.length;
    });
  }
  return couldRun(words, want, 'in order');
}

/** Programs that add words read from their input to the command they run (`echo deploy | xargs make`). */
const ADDS_INPUT_WORDS = new Set(['xargs', 'parallel']);
/** A word that stands for any words (unreadable). */
const ANY_WORDS = '$@';

/**
 * The words after the program at `at`, as it runs them: after `xargs` or `parallel` they are
 * followed by words read from input (any), and their `{}` and `:::` are any words too; a `{}`
 * (`find … -exec make {} +`, `xargs -I{} make {}`) is a file's name, any words.
 */
function argumentsRun(words: readonly string[], at: number): string[] {
  const fed = words.slice(0, at).some((word) => ADDS_INPUT_WORDS.has(programName(word)));
  const args = words.slice(at + 1).map((word) => (word.includes('{}') || (fed && word.startsWith(':::')) ? ANY_WORDS : word));
  return fed ? [...args, ANY_WORDS] : args;
}

/**
 * Whether `words` could be `want` (`whole`) or hold its words in order (`in order`), where an
 * unreadable word stands for any words, none included (`$T` may be `deploy`, or `deploy now`, or nothing).
 */
function wildcardMatch(words: readonly string[], want: readonly string[], how: 'whole' | 'in order'): boolean {
  // reach[j]: the first j words of `want` can be accounted for by the words read so far.
  let reach = want.map((_, j) => j === 0).concat(want.length === 0);
  for (const word of words) {
    const next = reach.map(() => false);
    for (let j = 0; j <= want.length; j++) {
      if (!reach[j]) continue;
      if (unreadable(word)) for (let k = j; k <= want.length; k++) next[k] = true;
      else if (j < want.length && word === want[j]) next[j + 1] = true;
      if (how === 'in order') next[j] = true; // a word of its own, between the rule's
    }
    reach = next;
  }
  return reach[want.length]!;
}

const sameText = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** A path as a deny rule compares it: resolved against the workspace, else normalized as written. */
function deniedPath(path: string, workspace: string | undefined): string {
  return placePath(path, workspace).path ?? posix.normalize(path);
}

/**
 * The paths a write reaches, as a deny rule sees them: as asked (resolved) and where it lands,
 * walked as written (`d/../x` follows `d` before its `..`); undefined where that was not read.
 */
function writtenPaths(subject: MatchSubject): (string | undefined)[] {
  const asked = subject.path ?? deniedPath(subject.command_or_path, subject.workspace);
  return isAbsolute(asked) ? [asked, landing(asWritten(subject.command_or_path, subject.workspace) ?? asked)] : [asked];
}

/** A deny glob against one written path, without case; a relative glob within the workspace. */
function deniedGlob(glob: string, path: string, workspace: string | undefined): boolean {
  if (isAbsolute(glob) || workspace === undefined || !isAbsolute(path)) return globMatches(glob, path, true);
  const rel = relative(workspace, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && globMatches(glob, rel, true);
}

/** The danger tags a match itself names: those of its own text (a rule approves no other tag). */
function namedTags(match: ApprovalMatch, kind: 'exec' | 'write', workspace: string | undefined): DangerTag[] {
  if ('exact' in match) return dangerTags(kind, match.exact, workspace);
  // A prefix leaves the words after it open: it never names the command an option there runs (`find . -exec *`).
  if ('prefix' in match) return dangerTags('exec', match.prefix, workspace).filter((tag) => tag !== 'runs-command');
  return dangerTags('write', match.glob, workspace);
}

/**
 * Whether a rule keeping `match` may approve a request carrying `danger`: its own text names every
 * one of those tags (`rm *` does not name `rm -rf build`'s recursive-delete).
 */
export function namesEveryTag(match: ApprovalMatch, kind: 'exec' | 'write', workspace: string | undefined, danger: readonly DangerTag[]): boolean {
  if (danger.length === 0) return true;
  const named = namedTags(match, kind, workspace);
  return danger.every((tag) => named.includes(tag));
}

/**
 * The matches offered for "for this task" and "always", the exact one first: for a command, also
 * its program and subcommand (`npm test *`) when it is one simple command; for a write inside the
 * workspace, also its directory (`src/*`).
 */
export function proposals(subject: MatchSubject): ApprovalMatch[] {
  const exact: ApprovalMatch = { exact: subject.command_or_path };
  if (subject.kind === 'exec') {
    const words = isSimpleCommand(subject.command_or_path);
    if (!words) return [exact];
    const head = words[0]!;
    // A program that runs another command in its arguments is offered exactly only: `sudo *`, `sh *` would approve anything.
    if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(head) || RUNS_OTHER_PROGRAMS.has(head)) return [exact];
    const program = words.slice(0, words.length > 1 && SUBCOMMAND_TOOLS.has(head) && /^[a-z][a-z0-9:_-]*$/.test(words[1]!) ? 2 : 1);
    if (program.length === words.length) return [exact];
    return [exact, { prefix: program.join(' ') }];
  }
  const placed = subject.path !== undefined ? { path: subject.path } : placePath(subject.command_or_path, subject.workspace);
  if (subject.workspace === undefined || placed.path === undefined) return [exact];
  const rel = relative(subject.workspace, placed.path);
  if (rel.startsWith('..') || isAbsolute(rel) || !rel.includes('/')) return [exact];
  const directory = rel.slice(0, rel.lastIndexOf('/'));
  // `*` and `?` in the directory's own name would be wildcards in its glob: wider than "its directory".
  if (/[*?]/.test(directory)) return [exact];
  return [exact, { glob: `${directory}/*` }];
}

/** `*` any characters but `/`, `**` any characters, `?` one character but `/`; the rest literal (without case when `ignoreCase`). */
export function globMatches(glob: string, path: string, ignoreCase = false): boolean {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, ignoreCase ? 'si' : 's').test(path);
}

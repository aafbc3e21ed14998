import { isAbsolute, posix, relative } from 'node:path';
import { dangerTags } from './danger.js';
import { placePath } from './sensitive-paths.js';
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
/** Programs that run the command their arguments name. */
const RUNS_OTHERS = new Set([
  'sudo', 'su', 'doas', 'pkexec', 'run0', 'env', 'xargs', 'nice', 'nohup', 'time', 'timeout', 'command', 'exec', 'eval', 'builtin', 'watch', 'find',
  'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'csh', 'tcsh', 'ash', 'busybox', 'npx', 'pnpx', 'bunx', 'python', 'python3', 'perl', 'ruby', 'node', 'php',
  'ssh', 'script', 'stdbuf', 'ionice', 'flock', 'parallel', 'source', '.',
]);

/** How a match reads to a person: `npm test` exactly, `npm test *`, `src/**`. */
export function describeMatch(match: ApprovalMatch): string {
  if ('exact' in match) return match.exact;
  if ('prefix' in match) return `${match.prefix} *`;
  return match.glob;
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
 * Whether a **deny** rule's `match` covers the request: as `matches`, but a prefix covers every
 * command line that runs it anywhere (`cd x && git push`, `sudo git push`, `git -C x push`,
 * `$(git push)`): its program (by name, wherever it lives) followed, in order, by its other
 * words. Errs toward denying: a deny rule must not be stepped around by writing the line another way.
 */
export function denies(match: ApprovalMatch, subject: MatchSubject): boolean {
  if (!('prefix' in match)) return matches(match, subject);
  if (subject.kind !== 'exec') return false;
  const want = isSimpleCommand(match.prefix);
  if (want === undefined) return false;
  return simpleCommands(subject.command_or_path).some(({ words }) =>
    words.some((word, at) => {
      if (posix.basename(word).toLowerCase() !== posix.basename(want[0]!).toLowerCase()) return false; // `GIT` is git on macOS
      let next = 1;
      for (const later of words.slice(at + 1)) if (next < want.length && later === want[next]) next++;
      return next === want.length;
    }),
  );
}

/** The danger tags a match itself names: those of its own text (a rule approves no other tag). */
function namedTags(match: ApprovalMatch, kind: 'exec' | 'write', workspace: string | undefined): DangerTag[] {
  if ('exact' in match) return dangerTags(kind, match.exact, workspace);
  if ('prefix' in match) return dangerTags('exec', match.prefix, workspace);
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
    if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(head) || RUNS_OTHERS.has(head)) return [exact];
    const program = words.slice(0, words.length > 1 && SUBCOMMAND_TOOLS.has(head) && /^[a-z][a-z0-9:_-]*$/.test(words[1]!) ? 2 : 1);
    if (program.length === words.length) return [exact];
    return [exact, { prefix: program.join(' ') }];
  }
  const placed = subject.path !== undefined ? { path: subject.path } : placePath(subject.command_or_path, subject.workspace);
  if (subject.workspace === undefined || placed.path === undefined) return [exact];
  const rel = relative(subject.workspace, placed.path);
  if (rel.startsWith('..') || isAbsolute(rel) || !rel.includes('/')) return [exact];
  return [exact, { glob: `${rel.slice(0, rel.lastIndexOf('/'))}/*` }];
}

/** `*` any characters but `/`, `**` any characters, `?` one character but `/`; the rest literal. */
export function globMatches(glob: string, path: string): boolean {
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
  return new RegExp(`^${source}$`, 's').test(path);
}

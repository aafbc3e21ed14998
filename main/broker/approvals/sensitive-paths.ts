import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, join, posix, relative, resolve } from 'node:path';
import { fromHome, unplacedHome } from './home-path.js';
import type { DangerTag } from './types.js';

/** Files a shell reads on its own at start: a write there runs later, unasked. */
const SHELL_DOTFILES = new Set([
  '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.zshenv',
  '.zlogin', '.zlogout', '.cshrc', '.tcshrc', '.kshrc', '.mkshrc', '.inputrc', 'config.fish',
]);
/** CI configuration: a write there runs on someone else's machine, with their secrets. */
const CI_FILES = new Set([
  '.gitlab-ci.yml', '.travis.yml', 'azure-pipelines.yml', 'Jenkinsfile', 'bitbucket-pipelines.yml', '.drone.yml',
  '.woodpecker.yml', 'appveyor.yml', '.appveyor.yml', '.cirrus.yml',
].map((name) => name.toLowerCase()));
const CI_DIRS = ['.circleci', '.buildkite', '.woodpecker'];
/** `<dir>/workflows`: GitHub's, Gitea's and Forgejo's Actions. */
const WORKFLOW_PARENTS = new Set(['.github', '.gitea', '.forgejo']);

/** Where a path lies, as the gateway resolves it (lexically, never following links). */
export interface PlacedPath {
  /** Absolute, when it could be resolved (a relative path needs a workspace). */
  path?: string;
  /** True when it lies outside the workspace (or is under `~`, which no workspace is said to be). */
  outside?: boolean;
}

/** `target` resolved against `workspace`: a home spelling (`~`, `$HOME`, `fromHome`) counts as outside any workspace. */
export function placePath(target: string, workspace: string | undefined): PlacedPath {
  if (fromHome(target) !== undefined || unplacedHome(target)) return { outside: true };
  if (workspace === undefined) return isAbsolute(target) ? { path: resolve(target) } : {};
  const path = resolve(workspace, target);
  const rel = relative(workspace, path);
  return { path, outside: rel === '..' || rel.startsWith('../') || isAbsolute(rel) };
}

/** The tags a write to `target` carries: where it lands (outside the workspace, a hook, a dotfile, CI). */
export function pathTags(target: string, workspace: string | undefined): DangerTag[] {
  const tags = new Set<DangerTag>();
  const placed = placePath(target, workspace);
  if (placed.outside === true) tags.add('outside-workspace');
  // Compared without case: macOS's and Windows' file systems ignore it (`.GIT/Hooks` is `.git/hooks` there).
  const parts = posix.normalize(target.replaceAll('\\', '/')).toLowerCase().split('/').filter((p) => p !== '' && p !== '.');
  const name = parts.at(-1) ?? '';
  parts.forEach((part, i) => {
    const next = parts[i + 1];
    if (part === '.git' && (next === 'hooks' || next === 'config')) tags.add('vcs-hook');
    if (part === '.husky' || part === '.githooks') tags.add('vcs-hook');
    if (WORKFLOW_PARENTS.has(part) && (next === 'workflows' || next === 'actions')) tags.add('ci-config');
    if (CI_DIRS.includes(part)) tags.add('ci-config');
  });
  if (name === '.pre-commit-config.yaml') tags.add('vcs-hook');
  if (SHELL_DOTFILES.has(name)) tags.add('shell-dotfile');
  if (CI_FILES.has(name)) tags.add('ci-config');
  return [...tags];
}

/**
 * A write's path as the kernel walks it: joined to the workspace but not normalized, so a `..` is
 * still after the part it steps back from (`d/../x`, `d` a link: the kernel follows `d` first).
 */
export function asWritten(target: string, workspace: string | undefined): string | undefined {
  const home = fromHome(target);
  if (home !== undefined) return home;
  if (isAbsolute(target)) return target;
  return workspace === undefined ? undefined : `${workspace}/${target}`;
}

/** At most this many parts before a path's last `..` are resolved part by part; past them where it lands is not read. */
export const MAX_PARTS_BEFORE_UP = 64;

/**
 * Where a write to absolute `path` (as written, `..` kept) lands: the real path of its deepest
 * part that exists, the rest joined on; undefined when it cannot be read. A `..` is applied after
 * the link before it is followed, as the kernel does (`d/../x` with `d -> .git/hooks/sub` is
 * `.git/hooks/x`; resolving `..` as text first, as `path.resolve` and Node's `realpathSync` do,
 * said `x`): the part up to the last `..` goes to libc's `realpath`, which walks it part by part
 * (bounded: past 64 parts, or a part that cannot be read, the landing is not read: fails closed).
 * After it, a part exists only if every part above it does, so the deepest one is found by
 * halving (about 13 realpaths for 8,191 parts): reading every parent from the end was quadratic
 * in the path's length (1-2 s of main thread for a 16 Ki path).
 */
export function landing(path: string, hops = 0): string | undefined {
  let parts = path.split('/').filter((part) => part !== '' && part !== '.');
  let base = '/';
  const lastUp = parts.lastIndexOf('..');
  if (lastUp >= 0) {
    if (lastUp > MAX_PARTS_BEFORE_UP) return undefined;
    try {
      base = realpathSync.native('/' + parts.slice(0, lastUp + 1).join('/'));
    } catch {
      return undefined; // a part before a `..` that does not exist or cannot be read: the kernel's walk is unknown
    }
    parts = parts.slice(lastUp + 1);
  }
  const real = (count: number): string | undefined => {
    try {
      return realpathSync(join(base, ...parts.slice(0, count)));
    } catch {
      return undefined;
    }
  };
  let found = real(0);
  if (found === undefined) return lastUp >= 0 ? undefined : path;
  let lo = 0; // parts known to exist
  let hi = parts.length + 1; // parts known not to
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    const at = real(mid);
    if (at === undefined) hi = mid;
    else [lo, found] = [mid, at];
  }
  if (lo === parts.length) return found;
  // The first part that does not resolve may be a link to what does not exist (yet): the kernel
  // follows it (`open(O_CREAT)` creates its target), so it is read (readlink) and followed as
  // written, one link at a time, at most as many as the kernel would (ELOOP past 40).
  const link = join(found, parts[lo]!);
  let target: string;
  try {
    if (!lstatSync(link).isSymbolicLink()) return join(found, parts.slice(lo).join('/'));
    target = readlinkSync(link);
  } catch {
    return join(found, parts.slice(lo).join('/')); // not there at all: created where it is asked
  }
  if (hops >= MAX_LINKS_FOLLOWED) return undefined;
  const through = [target.startsWith('/') ? target : `${found}/${target}`, ...parts.slice(lo + 1)].join('/');
  return landing(through, hops + 1);
}

/** Links followed on one path before the kernel gives up (Linux's MAXSYMLINKS): past them, where it lands is not read. */
const MAX_LINKS_FOLLOWED = 40;

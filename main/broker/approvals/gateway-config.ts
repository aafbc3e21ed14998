/**
 * The gateway's own configuration: the files that decide what it lets through without a person
 * (the approvals rules file, the plugins' grants file, each `plugins.lock`, and the audit log
 * that says what was decided). A worker's one approved write of one of them adds an "always
 * allow" rule, grants a plugin files and network access, drops a deny rule (a file made writable
 * by others, or removed, decides nothing), or forges what the log says; it reads as an ordinary
 * write when the workspace holds them (`serve` started in `$HOME`, whose `.config/chatty/`
 * holds the rules). Such a request is tagged `gateway-config`, which no rule's text names: a
 * person is asked, and told what it touches.
 */
import { statSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { fromHome, unplacedHome } from './home-path.js';
import { landing } from './sensitive-paths.js';

/**
 * The places a request must not reach unasked: each file as given and where its links lead,
 * compared without case (errs toward tagging), and each file's device and inode, which a second
 * name (a hard link: `ln ~/.config/chatty/approvals.json notes.json`) shares.
 */
export class ConfigPlaces {
  private readonly places: readonly string[];
  private readonly inodes: ReadonlySet<string>;
  /** Each file's last part (`approvals.json`), lower case: looked for anywhere in a command line. */
  private readonly fileNames: readonly string[];

  constructor(files: readonly string[]) {
    const places = new Set<string>();
    const inodes = new Set<string>();
    for (const file of files) {
      const given = resolve(file);
      places.add(comparable(given));
      // Where a write of it lands (`~/.config -> dotfiles/config`): the request's paths are compared after their own links too.
      const real = landing(given);
      if (real !== undefined) places.add(comparable(real));
      const id = inode(given);
      if (id !== undefined) inodes.add(id);
    }
    this.places = [...places];
    this.inodes = inodes;
    this.fileNames = [...new Set(this.places.map((place) => basename(place)).filter((name) => name !== ''))];
  }

  /**
   * Whether `line` holds one of the files' names anywhere, in any word or quote (`python3 -c
   * "open('approvals.json','w')"`, `cd sub && cp x ../.config/chatty/approvals.json`, `OUT=…/approvals.json;
   * echo > $OUT`): a line may reach a file by a path the gateway cannot place (a folder it changed
   * to, a variable, an interpreter's code), and its name is the one part it cannot leave out
   * unless it builds it. Errs toward tagging: a workspace's own `plugins.lock` is tagged too.
   */
  namedIn(line: string): boolean {
    const text = line.toLowerCase();
    return this.fileNames.some((name) => text.includes(name));
  }

  /**
   * Whether relative `word`, read from a folder the gateway cannot place (`cd "$D" && cp x
   * chatty/*`), could be one of the files or a folder holding one: its parts after its last `..`
   * match consecutive parts of a file's path (a glob part any it could match). A word of only
   * `.` and `..` could be any folder.
   */
  reachedFromAnyFolder(word: string): boolean {
    const parts = word.split('/').filter((part) => part !== '' && part !== '.');
    const tail = parts.slice(parts.lastIndexOf('..') + 1);
    if (tail.length === 0) return true;
    const pattern = tail.map((part) => globPart(part.toLowerCase()));
    return this.places.some((place) => {
      const placeParts = place.split('/');
      for (let from = 0; from + pattern.length <= placeParts.length; from++) {
        if (pattern.every((part, i) => part.test(placeParts[from + i]!))) return true;
      }
      return false;
    });
  }

  get empty(): boolean {
    return this.places.length === 0;
  }

  /** Whether absolute `path` is one of the files (a word merely named: `grep -r x .` names the folder, not the file). */
  names(path: string): boolean {
    return this.matched(path, false);
  }

  /**
   * Whether absolute `path` is one of the files or a folder that holds one: removing, moving,
   * replacing or opening up the folder reaches the file (`rm -rf ~/.config/chatty`, `chmod 777 …`).
   */
  reaches(path: string): boolean {
    return this.matched(path, true);
  }

  /** Whether the file at `path` (links followed) is one of the files under another name: the same device and inode. */
  isSecondName(path: string): boolean {
    const id = this.inodes.size > 0 ? inode(path) : undefined;
    return id !== undefined && this.inodes.has(id);
  }

  /** `path` may be a shell glob (`chatt[y]/approvals.js?n`): then each place it could match counts. */
  private matched(path: string, folders: boolean): boolean {
    const at = comparable(resolve(path));
    if (!/[*?[]/.test(at)) return this.places.some((place) => place === at || (folders && place.startsWith(at === '/' ? '/' : `${at}/`)));
    const pattern = at.split('/').map(globPart);
    return this.places.some((place) => {
      const parts = place.split('/');
      return (pattern.length === parts.length || (folders && pattern.length < parts.length)) && pattern.every((part, i) => part.test(parts[i]!));
    });
  }
}

function comparable(path: string): string {
  return path.toLowerCase();
}

/**
 * One part of a path as the shell matches it against a name: `*` any characters, `?` one, `[…]`
 * one (any, erring toward a match), and a leading `.` only by a pattern that starts with one.
 */
export function globPart(part: string): RegExp {
  let source = part.startsWith('.') ? '' : '(?!\\.)';
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[' && part.indexOf(']', i + 2) > 0) {
      source += '.';
      i = part.indexOf(']', i + 2);
    } else source += c.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

/** The device and inode of the file at `path` (links followed), when there is one. */
function inode(path: string): string | undefined {
  try {
    const stat = statSync(path, { bigint: true });
    return stat.isFile() ? `${stat.dev}:${stat.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where `word` points as a path, read as written (no links followed: cheap enough for every word
 * of a command): absolute, `~`-based, or relative to `workspace`. Undefined when it cannot be placed.
 */
export function wordPlace(word: string, workspace: string | undefined): string | undefined {
  const home = fromHome(word);
  if (home !== undefined) return home;
  if (isAbsolute(word)) return word;
  if (unplacedHome(word)) return undefined; // another user's home the gateway cannot place: see `reachedFromAnyFolder`
  if (workspace === undefined || word === '' || word.startsWith('-')) return undefined;
  return resolve(workspace, word);
}

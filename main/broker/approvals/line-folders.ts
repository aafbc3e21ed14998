/**
 * The folders a command line's relative words may be read from besides the asker's workspace:
 * a shell that ran `cd ..` (or `pushd`, `env -C`, `git -C`, `git --work-tree`, `make -C`…) reads `.config/chatty/x`
 * from there, not from the workspace. Used for every path a request writes and for the gateway's
 * own files (which must not be reached by a path the workspace does not explain): each `cd` target is placed
 * against every folder the line may already be in (the order of `&&`, `;`, `||` and subshells is
 * not followed: errs toward more folders), and one the gateway cannot place (`cd "$D"`, `cd -`,
 * `popd`, a glob or substitution, past `MAX_LINE_FOLDERS`, an `eval`'d text that changes folder,
 * a line that sets or exports CDPATH) makes the folder unknown: any.
 */
import { isAbsolute, resolve } from 'node:path';
import { fromHome, unplacedHome } from './home-path.js';
import { programName } from './nested-lines.js';
import { landing } from './sensitive-paths.js';
import type { SimpleCommand } from './shell-commands.js';

/** Where a line's relative words may be read from, besides the workspace. */
export interface LineFolders {
  /** Absolute folders it may have changed to (lexically, and where their links lead). */
  known: readonly string[];
  /** It may have changed to a folder the gateway cannot place: a relative word could be anywhere. */
  unknown: boolean;
}

export const NO_OTHER_FOLDERS: LineFolders = { known: [], unknown: false };

/** At most this many folders are followed for one request; past them, the folder is unknown. */
export const MAX_LINE_FOLDERS = 16;

const CHANGES_FOLDER = new Set(['cd', 'pushd', 'chdir']);

/** A word read again as a line (`eval 'cd ..'`) that changes folder. */
const CHANGES_FOLDER_IN_TEXT = /(^|[\s;&|(`{])(cd|pushd|popd|chdir)(\s|$|;)/;

/** `cd`'s folder: after its options (any `-x` word) or after `--`; `-` alone is the previous folder. Undefined when none (home). */
function folderOperand(args: readonly string[]): string | undefined {
  for (let j = 0; j < args.length; j++) {
    const word = args[j]!;
    if (word === '--') return args[j + 1];
    if (word === '-' || !word.startsWith('-')) return word;
  }
  return undefined;
}

/** The folders `commands` may change to, added to `from` (the line they are nested in). */
export function lineFolders(commands: readonly SimpleCommand[], workspace: string | undefined, from: LineFolders): LineFolders {
  const known = [...from.known];
  let unknown = from.unknown;
  const add = (target: string | undefined): void => {
    if (unknown) return;
    if (target === undefined || target === '-' || /[$`*?[{]/.test(target) || unplacedHome(target)) {
      unknown = true;
      return;
    }
    const home = fromHome(target);
    const bases = home !== undefined || isAbsolute(target) ? [undefined] : [workspace, ...known];
    for (const base of bases) {
      const place = home ?? (isAbsolute(target) ? resolve(target) : base !== undefined ? resolve(base, target) : undefined);
      if (place === undefined) {
        unknown = true;
        return;
      }
      // A shell's cd keeps `..` lexical, but the programs it runs resolve `..` after the links: both.
      for (const folder of new Set([place, landing(place) ?? place])) if (folder !== workspace && !known.includes(folder)) known.push(folder);
      if (known.length > MAX_LINE_FOLDERS) {
        unknown = true;
        return;
      }
    }
  };
  // A line that sets or exports CDPATH (`CDPATH=.. cd .config`, `export CDPATH=..`) makes any relative `cd` search folders the gateway does not follow.
  if (commands.some(({ words }) => words.some((word) => word.includes('CDPATH')))) unknown = true;
  for (const { words } of commands) {
    words.forEach((word, i) => {
      const program = programName(word);
      if (program === 'popd') unknown = true;
      // `eval 'cd ..'`: its words are read again as a line; one that changes folder could go anywhere (not chased spelling by spelling).
      else if (program === 'eval' && words.slice(i + 1).some((w) => CHANGES_FOLDER_IN_TEXT.test(w))) unknown = true;
      else if (CHANGES_FOLDER.has(program)) {
        const target = folderOperand(words.slice(i + 1));
        add(target ?? '~'); // a bare `cd` goes home
        // CDPATH inherited from the gateway (workers inherit its environment): `cd name` may be searched there.
        if (target !== undefined && process.env['CDPATH'] && !/^(\/|\.\.?(\/|$)|~|\$)/.test(target)) unknown = true;
      } else if (word === '-C' || word === '--chdir' || word === '--directory' || word === '--work-tree') add(words[i + 1]);
      else if (/^--(chdir|directory|work-tree)=/.test(word)) add(word.slice(word.indexOf('=') + 1));
      else if (/^GIT_WORK_TREE=/.test(word)) add(word.slice(word.indexOf('=') + 1));
      // git's repository elsewhere: its own config may name any work tree (core.worktree).
      else if (word === '--git-dir' || /^--git-dir=|^GIT_DIR=/.test(word)) unknown = true;
      else if (/^-C./.test(word)) add(word.slice(2));
    });
    if (unknown) break;
  }
  return { known: unknown ? [] : known, unknown };
}

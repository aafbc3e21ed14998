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
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { landing } from './sensitive-paths.js';

/** The places a request must not reach unasked: each file as given and where its links lead, compared without case (errs toward tagging). */
export class ConfigPlaces {
  private readonly places: readonly string[];

  constructor(files: readonly string[]) {
    const places = new Set<string>();
    for (const file of files) {
      const given = resolve(file);
      places.add(comparable(given));
      // Where a write of it lands (`~/.config -> dotfiles/config`): the request's paths are compared after their own links too.
      const real = landing(given);
      if (real !== undefined) places.add(comparable(real));
    }
    this.places = [...places];
  }

  get empty(): boolean {
    return this.places.length === 0;
  }

  /**
   * Whether absolute `path` is one of the files, or (`folders`, for a path written) a folder that
   * holds one: removing, moving, replacing or opening up the folder reaches the file (`rm -rf
   * ~/.config/chatty`, `chmod 777 …`). A word merely named (`grep -r x .`) counts for the files only.
   */
  reaches(path: string, folders: boolean): boolean {
    const at = comparable(resolve(path));
    return this.places.some((place) => place === at || (folders && place.startsWith(at === '/' ? '/' : `${at}/`)));
  }
}

function comparable(path: string): string {
  return path.toLowerCase();
}

/**
 * `target` as an absolute path when it names the home folder (`~/x`, `$HOME/x`, `${HOME}/x`): the
 * gateway's own home, the user's whose files these are. Undefined for any other spelling.
 */
export function fromHome(target: string): string | undefined {
  const m = /^(~|\$HOME|\$\{HOME\})(\/.*)?$/.exec(target);
  return m ? `${homedir()}${m[2] ?? ''}` : undefined;
}

/**
 * Where `word` points as a path, read as written (no links followed: cheap enough for every word
 * of a command): absolute, `~`-based, or relative to `workspace`. Undefined when it cannot be placed.
 */
export function wordPlace(word: string, workspace: string | undefined): string | undefined {
  const home = fromHome(word);
  if (home !== undefined) return home;
  if (isAbsolute(word)) return word;
  if (workspace === undefined || word === '' || word.startsWith('-')) return undefined;
  return resolve(workspace, word);
}

import { readFileSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { everyCommandRun, programName } from './nested-lines.js';

/**
 * The spellings of a folder the worker's shell expands to the same place the gateway knows:
 * `~`, `$HOME`, `${HOME}` (the gateway's own home, the user's) and `$XDG_CONFIG_HOME`,
 * `${XDG_CONFIG_HOME}` (where the rules file lives by default; workers inherit the gateway's value).
 * The one reading of them: the danger tags, where a write lands and the words named all ask here.
 */
const HOME_SPELLING = /^(~|\$HOME|\$\{HOME\}|\$XDG_CONFIG_HOME|\$\{XDG_CONFIG_HOME\})(\/.*)?$/;

/**
 * `target` as an absolute path when it starts with a home spelling (`~/x`, `$HOME/x`,
 * `$XDG_CONFIG_HOME/chatty/x`); undefined for any other spelling. An unset `$XDG_CONFIG_HOME`
 * expands to nothing, as the shell does (`$XDG_CONFIG_HOME/x` is `/x`).
 */
export function fromHome(target: string): string | undefined {
  const user = USER_HOME.exec(target);
  if (user) {
    const home = userHome(user[1]!);
    return home === undefined ? undefined : `${home}${user[2] ?? ''}`;
  }
  const m = HOME_SPELLING.exec(target);
  if (!m || homeReset) return undefined;
  const base = m[1]!.includes('XDG') ? (process.env['XDG_CONFIG_HOME'] ?? '') : homedir();
  const path = `${base}${m[2] ?? ''}`;
  return path === '' ? undefined : path;
}

/** `~name` and `~name/…`: that user's home, as bash reads it (its passwd entry, not `$HOME`). */
const USER_HOME = /^~([A-Za-z0-9._][A-Za-z0-9._-]*)(\/.*)?$/;

/**
 * `~+` (`$PWD`), `~-` (`$OLDPWD`), `~+2`, `~-1` (the directory stack; `~2` is read as a user
 * name, also unplaced): bash expands them from variables a line may set (`OLDPWD=…; cp x ~-/`) or
 * folders it changed to, so they are folders the gateway cannot place.
 */
const DIR_STACK = /^~([+-]\d*)(\/.*)?$/;

/**
 * Whether `target` starts with `~name` for a user the gateway cannot place (no entry in
 * /etc/passwd; a directory service the gateway does not ask): its home could be anywhere, so it is
 * read as outside the workspace and unpredictable (never as the relative word it reads as).
 */
export function unplacedHome(target: string): boolean {
  if ((homeReset && HOME_SPELLING.test(target)) || DIR_STACK.test(target)) return true;
  const user = USER_HOME.exec(target);
  return user !== null && userHome(user[1]!) === undefined;
}

/** What follows a home spelling (`~bob/.config/x`, `$HOME/.config/x`: `.config/x`); `target` when it has none. */
export function belowHome(target: string): string {
  const home = HOME_SPELLING.exec(target) ?? USER_HOME.exec(target) ?? DIR_STACK.exec(target);
  return home ? (home[2] ?? '').replace(/^\/+/, '') : target;
}

/**
 * While a line that sets HOME or XDG_CONFIG_HOME is read (`HOME=.. ; cp x ~/.config/chatty/`,
 * `export HOME=…`, `env HOME=…`, in a nested `sh -c` too): its `~`, `$HOME` and
 * `$XDG_CONFIG_HOME` are no longer the gateway's, and are read as a home it cannot place.
 */
let homeReset = false;

/**
 * Whether `line` may set HOME or XDG_CONFIG_HOME. Errs toward yes (a mention, `echo HOME`, is read
 * as a setting too: its `~` is then said to MAY reach where it goes). A builtin gets the name after
 * quote removal and brace expansion (`printf -v HO\ME`, `declare -n h=HO''ME`, `declare
 * {HOME,X}=`, `declare H{O,}ME=`), or built at run time (`declare ${v}ME=`), and a sourced file
 * may set anything: so the name in the line with its quotes, backslashes and braces taken out, but
 * not in a read (`$HOME`, `${HOME}`); a builtin that sets a variable by name given a word built at
 * run time or with braces; or a sourced file.
 */
export function setsHome(line: string): boolean {
  const unquoted = line.replace(/\\\n|[\\'"]/g, '');
  // `${XDG_CONFIG_HOME:=…}` assigns when it is unset (the gateway's usual case), `${!v:=…}` whatever `$v` names,
  // `${XDG_CONFIG_HOME[0]:=…}` too (element 0 is the variable).
  if (/\$\{(?:![^}:=]*|(?:HOME|XDG_CONFIG_HOME)(?:\[[^\]}]*\])?):?=/.test(unquoted)) return true;
  const plain = unquoted.replace(/\$\{(HOME|XDG_CONFIG_HOME)\}/g, '$$$1').replace(/[{},]/g, '');
  if (/(?<![\w$])(HOME|XDG_CONFIG_HOME)(?!\w)/.test(plain)) return true;
  return (NAME_SETTERS.test(line) && /[$`{]/.test(line)) || sourcesAFile(line);
}

/** The builtins that set a variable whose name is one of their arguments. */
const NAME_SETTERS = /(?<![\w./-])(declare|typeset|export|local|readonly|read|printf|getopts|mapfile|readarray|eval|let|unset|env)(?![\w./-])/;

/**
 * Whether a command of `line` (or of a line nested in it) runs `source` or `.`, read as the
 * shell reads its words (quotes removed: `"source" f`, `\. f`, `'.' f`), after the words that may
 * come before a command's program (`if . f`, `while . f`, `X=1 . f`, `command . f`): the file may
 * set anything. `find . -name x` runs find.
 */
function sourcesAFile(line: string): boolean {
  return everyCommandRun(line).commands.some(({ words }) => {
    for (const word of words) {
      if (/^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word) || BEFORE_PROGRAM.has(word) || word.startsWith('-')) continue;
      const program = programName(word);
      if (program === '.' || program === 'source') return true;
      if (!BEFORE_PROGRAM.has(program)) return false;
    }
    return false;
  });
}

/** Words a command's program may follow: the shell's reserved words and the builtins that run the word after them. */
const BEFORE_PROGRAM = new Set(['!', '{', '}', '(', 'if', 'then', 'else', 'elif', 'while', 'until', 'do', 'time', 'command', 'builtin', 'eval', 'exec', 'coproc']);

/** Runs `read` with the home spellings unplaceable when `line` sets HOME (`setsHome`). */
export function readingLine<T>(line: string, read: () => T): T {
  const before = homeReset;
  homeReset = before || setsHome(line);
  try {
    return read();
  } finally {
    homeReset = before;
  }
}

/** The home folder of user `name`: the gateway's own user's from the system, another's from /etc/passwd (read again when it changes). */
function userHome(name: string): string | undefined {
  try {
    const own = userInfo();
    if (name === own.username) return own.homedir;
  } catch {
    // no entry for the gateway's own uid: read as any other name
  }
  return passwdHomes().get(name);
}

let passwd: { mtimeMs: number; homes: Map<string, string> } | undefined;

function passwdHomes(): Map<string, string> {
  try {
    const { mtimeMs } = statSync('/etc/passwd');
    if (passwd?.mtimeMs !== mtimeMs) {
      const homes = new Map<string, string>();
      for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const fields = line.split(':');
        if (fields.length >= 7 && fields[5]!.startsWith('/')) homes.set(fields[0]!, fields[5]!);
      }
      passwd = { mtimeMs, homes };
    }
    return passwd.homes;
  } catch {
    return new Map(); // no passwd file (macOS keeps users elsewhere): every other name is unplaced
  }
}

import { posix } from 'node:path';
import { asShellLine, envStringWords } from './env-split.js';
import { readCommands, type SimpleCommand } from './shell-commands.js';
import { wrapperWords } from './wrapper-options.js';

/**
 * The command lines a simple command runs from its own arguments: `sh -c '…'`, `eval …`, `su -c
 * '…'`, `env -S '…'`. Read by the danger tags and by deny rules alike, so that what one sees
 * inside a `sh -c` the other sees too.
 */

export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'csh', 'tcsh', 'ash']);

/** Nested command lines are read at most this deep (a worker's `eval eval …` 3,000 deep overflowed the stack). */
export const MAX_NESTING = 24;

/** A word a second reading (by `eval`, `env -S`) would read otherwise than as this one word. */
export function needsReading(word: string): boolean {
  return /[\s;&|()<>`$'"\\#*?[~]/.test(word);
}

/**
 * The program a word names, as the gateway compares programs: by name, wherever it lives, in
 * lower case (`/usr/bin/GIT`). Its folder ends at the last `/` outside any `${…}`, `$(…)`, `{…}`
 * or backticks (`${D}/make` is make); a `/` inside one is the expansion's own (`${P%/x}`,
 * `${P/x/m}`, `{/bin/make,x}` are the whole word, unreadable), in one pass.
 */
export function programName(word: string): string {
  const bare = word.length > 1 ? word.replace(/\/+$/, '') || '/' : word;
  let depth = 0;
  let quoted = false; // within backticks
  let folder = -1;
  for (let i = 0; i < bare.length; i++) {
    const c = bare[i]!;
    if (c === '`') quoted = !quoted;
    else if (c === '{' || (c === '$' && bare[i + 1] === '(')) depth++;
    else if ((c === '}' || c === ')') && depth > 0) depth--;
    else if (c === '/' && depth === 0 && !quoted) folder = i;
  }
  return (depth > 0 || quoted ? bare : bare.slice(folder + 1)).toLowerCase();
}

/**
 * A word the gateway cannot read as what runs: a variable, a substitution (`$(…)`, backticks,
 * each standing as one `$` word), a glob, a brace expansion (`{make,deploy}`, `m{a..a}ke`: bash
 * makes words of it). It could be any words, or none.
 */
export function unreadable(word: string): boolean {
  if (/[$`*?[]/.test(word)) return true;
  const inside = withinBraces(word);
  return inside !== undefined && (inside.includes(',') || inside.includes('..'));
}

/** What a word's outermost braces hold (`{rm,-rf,~}`: `rm,-rf,~`), or undefined without braces. */
export function withinBraces(word: string): string | undefined {
  const open = word.indexOf('{');
  const close = word.lastIndexOf('}');
  return open < 0 || close < open ? undefined : word.slice(open + 1, close);
}

/**
 * `env [options] -S STRING …`: where the string is (`-S x`, `-Sx`, `-iSx`, `-vS x`, `--split-string=x`,
 * `--sp x`, after `-u NAME`), for the `env` at `at`: env's options read as its getopt reads them
 * (`wrapperWords`). `index` is the word holding the string (the option's own when glued).
 */
export function envSplitString(words: readonly string[], at: number): { index: number; value: string; glued: boolean } | undefined {
  const split = wrapperWords('env', words, at).values.find(({ name }) => name === 'S' || name === '--split-string');
  return split === undefined ? undefined : { index: split.index, value: split.value, glued: split.glued };
}

/**
 * The command line the program at `words[at]` runs from its arguments, or undefined: a shell's
 * `-c` string (`bash -ec '…'`), `eval`'s words joined, `trap`'s action, `su`'s `-c` string,
 * `env -S`'s string split as env splits it, after `env` (whose options are read again), with the words after it.
 */
export function commandLineRun(words: readonly string[], at: number): string | undefined {
  const program = programName(words[at]!);
  if (SHELLS.has(program)) {
    // Its options come before anything else (`bash -o pipefail -ec '…'`); the string is the first
    // word after `-c` that is no option. Each word is looked at once per shell before it that reaches it.
    let c = at + 1;
    while (c < words.length && /^[-+]/.test(words[c]!) && !/^-[a-z]*c[a-z]*$/.test(words[c]!)) c += /^[-+][oO]$|^--(rcfile|init-file)$/.test(words[c]!) ? 2 : 1;
    if (c >= words.length || !/^-[a-z]*c[a-z]*$/.test(words[c]!)) return undefined;
    let inner = c + 1;
    while (inner < words.length && words[inner]!.startsWith('-')) inner++;
    return words[inner];
  }
  if (program === 'eval') return words.slice(at + 1).join(' ');
  if (program === 'trap') {
    // `trap [-lp] [--] ACTION SIGNAL…`: the action is a command line the shell runs at the signal (`EXIT`: when the line ends).
    let first = at + 1;
    while (first < words.length && /^-[lp]+$/.test(words[first]!)) first += 1;
    if (words[first] === '--') first += 1;
    return words.length - first >= 2 && words[first] !== '-' ? words[first] : undefined;
  }
  if (program === 'su') {
    const c = words.slice(at + 1, at + 9).indexOf('-c');
    return c >= 0 ? words[at + 2 + c] : undefined;
  }
  if (program === 'env') {
    const split = envSplitString(words, at);
    if (split === undefined) return undefined;
    // The words env makes of the string by its own escapes (`rm\_-rf\_x` is `rm -rf x`), env's options read
    // again from them (`-S '-i rm -rf x'`: env goes on as `env -i rm -rf x`). A string env refuses runs nothing: read as written.
    const own = envStringWords(split.value);
    return [own !== undefined ? `env ${asShellLine(own)}` : split.value, ...words.slice(split.index + 1)].join(' ');
  }
  return undefined;
}

/**
 * The command `find … -exec … ;` (`-execdir`, `-ok`) runs, its words as they are (`bash -c 'rm -rf
 * ~'` keeps its one argument), at most 256 of them; `args` are find's arguments. Undefined when none.
 */
export function findExecWords(args: readonly string[]): string[] | undefined {
  const exec = args.findIndex((a) => a === '-exec' || a === '-execdir' || a === '-ok' || a === '-okdir');
  if (exec < 0) return undefined;
  const rest = args.slice(exec + 1);
  const stop = rest.findIndex((a) => a === ';' || a === '+');
  return rest.slice(0, Math.min(stop < 0 ? rest.length : stop, 256)); // bounded: `find -exec find -exec …` stays fast
}

/** Every simple command a line runs, and whether it was read whole. */
export interface CommandsRun {
  commands: SimpleCommand[];
  /**
   * False when reading stopped short (nested deeper than `MAX_NESTING`, past the reading budget,
   * or a line the shell reader could not follow to its end, `shell-text.ts`): what it did not read could run anything, and a caller that must not be stepped
   * around (a deny rule) fails closed.
   */
  complete: boolean;
}

/**
 * The simple commands of `line` and of every command line nested in them (`sh -c`, `eval`, `su
 * -c`, `env -S`, within `$(…)` and backticks too), each read on its own. A nested line whose
 * words need no second reading (`eval make deploy`) is not read again: its words are already
 * the outer command's. The characters read in all are bounded (a few times the line's own), so a
 * line built to be read again and again is cut short, and says so.
 */
export function everyCommandRun(line: string, shared?: { left: number }): CommandsRun {
  // `shared`: one budget for several lines read as one request's (the lines its wrappers run, match.ts).
  const budget = shared ?? { left: 4 * line.length + 4_096 };
  let complete = true;
  /** Past the budget or too deep: reading stops (an unfollowed line is still read on, as far as it goes). */
  let stopped = false;
  const read = (text: string, depth: number): SimpleCommand[] => {
    budget.left -= text.length;
    if (budget.left < 0 || depth > MAX_NESTING) {
      complete = false;
      stopped = true;
      return [];
    }
    const reading = readCommands(text);
    if (!reading.complete) complete = false; // read as far as it goes (and flat), but what it could not follow could be anything
    const queue = reading.commands;
    const all: SimpleCommand[] = [];
    // `queue` grows as it is read: the command a `find -exec` runs is read as one of its own.
    for (let next = 0; next < queue.length && !stopped; next++) {
      const command = queue[next]!;
      all.push(command);
      const { words } = command;
      const find = words.findIndex((word) => programName(word) === 'find');
      const exec = find >= 0 ? findExecWords(words.slice(find + 1)) : undefined;
      if (exec !== undefined && exec.length > 0) {
        budget.left -= exec.length;
        if (budget.left < 0) {
          complete = false;
          stopped = true;
        }
        queue.push({ words: exec, writes: [], stage: command.stage });
      }
      let plainFrom = words.length;
      while (plainFrom > 0 && !needsReading(words[plainFrom - 1]!)) plainFrom--;
      for (let at = 0; at < words.length && !stopped; at++) {
        if (at + 1 >= plainFrom) break; // from here on every word is read as it is: nothing more to read
        const inner = commandLineRun(words, at);
        if (inner !== undefined) all.push(...read(inner, depth + 1));
      }
    }
    return all;
  };
  const commands = read(line, 0);
  return { commands, complete };
}

/**
 * The options of the wrappers the danger reading looks through (`nice -n 5 make`: make is the
 * program), read as their getopt reads them: each wrapper's own options that take a value (a
 * cluster's rest or the next word: `-n5`, `-n 5`; a long one `=value` or the next word, by any
 * unambiguous shortening: `--adj 5`), `--` ending them, and the words of its own before the
 * command (timeout's duration, flock's lock). One regex of value letters for all of them took
 * `stdbuf -o L`'s `L` and `nice --adjustment 5`'s `5` for the program, and the `env -S '…'` after
 * it went unread.
 */
import { ownEntry } from './own-entry.js';

interface WrapperOptions {
  /** Short letters that take a value. */
  short?: string;
  /** Long names that take a value (the next word when no `=`). */
  long?: readonly string[];
  /** Words of its own after its options, before the command (`timeout 5 cmd`, `flock lock cmd`). */
  ownWords?: number;
  /** Environment assignments may come before the command (`env A=1 cmd`). */
  assignments?: boolean;
  /** An option after its own words that gives a command line instead of words (`flock lock -c '…'`). */
  lineAfter?: readonly string[];
}

/** Each looked-through wrapper's options (GNU coreutils, util-linux, procps, moreutils, expect, bash builtins). */
const WRAPPER_OPTIONS: Readonly<Record<string, WrapperOptions>> = {
  env: { short: 'uCSP', long: ['--unset', '--chdir', '--split-string'], assignments: true },
  nice: { short: 'n', long: ['--adjustment'] },
  nohup: {},
  // GNU time: `-o file` writes the file (read by the caller), `-f format`.
  time: { short: 'of', long: ['--output', '--format'] },
  command: {},
  builtin: {},
  exec: { short: 'a' },
  // `--max-lines`, `--eof`, `--replace` take a value only after `=` (getopt's optional argument): `xargs --max-lines env -S …` runs env.
  xargs: { short: 'adEILnPs', long: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'] },
  timeout: { short: 'ks', long: ['--kill-after', '--signal'], ownWords: 1 },
  stdbuf: { short: 'ioe', long: ['--input', '--output', '--error'] },
  ionice: { short: 'cnpPu', long: ['--class', '--classdata', '--pid', '--pgid', '--uid'] },
  chronic: {},
  caffeinate: { short: 'tw' },
  watch: { short: 'nq', long: ['--interval', '--equexit'] },
  unbuffer: {},
  // `flock [options] lock cmd`; `-c line` runs a line (read by the caller), `-w secs`, `-E code`.
  flock: { short: 'wEc', long: ['--timeout', '--conflict-exit-code', '--command'], ownWords: 1, lineAfter: ['-c', '--command'] },
  busybox: {},
  toybox: {},
};

export interface OptionValue {
  name: string;
  value: string;
  index: number;
  glued: boolean;
}

/** What a wrapper's words hold: where the command it runs starts, and each option's value by the option's name as given. */
export interface WrapperWords {
  /** The index (in `words`) of the command's first word; `words.length` when none. */
  command: number;
  /** Option values in order: the option's letter or long name (`o` for `-ox`, `--output`), the value, and the index of the word holding it (the option's own word when glued). */
  values: OptionValue[];
}

/**
 * The wrapper at `words[at]` (one of `WRAPPER_OPTIONS`, or any: read with no value options), its
 * options read as getopt reads them: the command starts at the first word that is no option, no
 * assignment (env) and none of its own words. An option it does not know takes no value (the
 * caller also reads the next words as programs: `alsoReadAsPrograms`).
 */
export function wrapperWords(program: string, words: readonly string[], at: number): WrapperWords {
  const options = ownEntry(WRAPPER_OPTIONS, program) ?? {};
  const values: OptionValue[] = [];
  let i = at + 1;
  for (; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') {
      i++;
      break;
    }
    if (options.assignments === true && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) continue;
    if (!word.startsWith('-') || word === '-') break;
    if (word.startsWith('--')) {
      const bare = word.split('=', 1)[0]!;
      const name = options.long?.find((long) => isOption(bare, long));
      if (name === undefined) continue;
      const glued = word.includes('=');
      const value = glued ? word.slice(word.indexOf('=') + 1) : words[++i];
      if (value !== undefined) values.push({ name, value, index: i, glued });
      continue;
    }
    for (let k = 1; k < word.length; k++) {
      const letter = word[k]!;
      if (!(options.short ?? '').includes(letter)) continue;
      const glued = k + 1 < word.length;
      const value = glued ? word.slice(k + 1) : words[++i];
      if (value !== undefined) values.push({ name: letter, value, index: i, glued });
      break;
    }
  }
  // Its own words (`timeout 5`, `flock lock`), unless an option gave the command instead (`flock lock -c '…'`).
  for (let own = options.ownWords ?? 0; own > 0 && i < words.length; own--) i++;
  const after = words[i];
  if (after !== undefined && options.lineAfter?.some((name) => isOption(after, name)) === true) {
    // `-c line`, `--command line`, `--command=line`: the line is the command; no words follow it.
    const glued = after.includes('=');
    const value = glued ? after.slice(after.indexOf('=') + 1) : words[i + 1];
    if (value !== undefined) values.push({ name: 'c', value, index: glued ? i : i + 1, glued });
    return { command: words.length, values };
  }
  return { command: Math.min(i, words.length), values };
}

/** The values of a wrapper's options named `names` (short letters and long names). */
export function optionValuesOf(read: WrapperWords, ...names: string[]): string[] {
  return read.values.flatMap(({ name, value }) => (names.includes(name) ? [value] : []));
}

/** `word` is the option `name` (`-c`), or a long one by any shortening of three characters or more, `=value` or not. */
function isOption(word: string, name: string): boolean {
  const bare = word.split('=', 1)[0]!;
  return bare === name || (name.startsWith('--') && bare.startsWith('--') && bare.length >= 3 && name.startsWith(bare));
}

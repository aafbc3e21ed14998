import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { shellWord } from './shell-word.js';

/**
 * `serve --agent NAME=COMMAND` with its relative paths made absolute against `dir` (the directory
 * `serve` was started in). Each task's worker runs in its own workspace, in a git repository a
 * fresh worktree of the base branch, where a file the user has not committed (the `helper.js` of
 * `--agent helper="node helper.js"`) does not exist; the user meant the one beside them.
 *
 * A word is rewritten only when all of this holds, so that anything else reaches the shell as typed:
 * - it is a plain word (no quotes, backslashes, `$`, backticks, globs, `~`, `{`), not a redirection's target;
 * - it is not an option (`-x`), an assignment (`A=b`), an absolute path, or only `.`/`..` (the workspace);
 * - it is not where `cd` or `pushd` goes: the worker works in its workspace, never in the user's checkout;
 * - in a command's first place, it has a `/` (else the shell looks it up in PATH: `node`, `npx`);
 * - it names a file or directory that exists in `dir`.
 */
export function resolveCommandPaths(command: string, dir: string): string {
  let out = command;
  for (const word of shellWords(command).reverse()) {
    const path = resolve(dir, word.text);
    if (!rewritable(word) || !existsSync(path)) continue;
    out = out.slice(0, word.start) + shellWord(path) + out.slice(word.end);
  }
  return out;
}

interface Word {
  text: string;
  start: number;
  end: number;
  /** Nothing in it the shell would expand or unquote: its text is the argument the program gets. */
  plain: boolean;
  /** The first word of a simple command: the program, looked up in PATH when it has no `/`. */
  commandPlace: boolean;
  /** The word after `<` or `>`: a file the shell opens (in the workspace, as the user wrote it). */
  redirect: boolean;
  /** An argument of `cd` or `pushd`: where the worker works, which stays its workspace. */
  changesDirectory: boolean;
}

function rewritable(word: Word): boolean {
  const { text } = word;
  if (!word.plain || word.redirect || word.changesDirectory || text.startsWith('-') || text.includes('=') || isAbsolute(text)) return false;
  if (text.split('/').every((part) => part === '' || part === '.' || part === '..')) return false;
  return !word.commandPlace || text.includes('/');
}

const SPACE = new Set([' ', '\t']);
/** Characters that end a word and start the next command. */
const COMMAND_SEPARATORS = new Set(['|', '&', ';', '(', ')', '\n']);
const REDIRECTS = new Set(['<', '>']);
/** Words that run the word after them as the program: it is looked up in PATH as the first word would be. */
const RUNS_THE_NEXT_WORD = new Set(['exec', 'command', 'env', 'nohup', 'nice', 'time']);
/** Characters that make a word not plain: the shell would expand, unquote or glob it. */
const NOT_PLAIN = /[\\'"$`*?[\]~{}!]/;

/** The words of a `/bin/sh -c` command line, with where each sits; stops at a comment. */
function shellWords(command: string): Word[] {
  const words: Word[] = [];
  let commandPlace = true;
  let redirect = false;
  let changesDirectory = false;
  let i = 0;
  while (i < command.length) {
    const c = command[i]!;
    if (SPACE.has(c)) {
      i++;
      continue;
    }
    if (COMMAND_SEPARATORS.has(c)) {
      commandPlace = true;
      redirect = false;
      changesDirectory = false;
      i++;
      continue;
    }
    if (REDIRECTS.has(c)) {
      redirect = true;
      i++;
      continue;
    }
    if (c === '#') break;
    const start = i;
    while (i < command.length) {
      const d = command[i]!;
      if (SPACE.has(d) || COMMAND_SEPARATORS.has(d) || REDIRECTS.has(d)) break;
      if (d === '\\') i += 2;
      else if (d === "'") i = closing(command, i, "'");
      else if (d === '"') i = closing(command, i, '"');
      else i++;
    }
    const text = command.slice(start, Math.min(i, command.length));
    words.push({ text, start, end: start + text.length, plain: !NOT_PLAIN.test(text), commandPlace, redirect, changesDirectory });
    if (commandPlace && (text === 'cd' || text === 'pushd')) changesDirectory = true;
    // An assignment before the program (`A=b node x.js`), or a word that runs the next one
    // (`exec node x.js`), leaves the next word in the first place.
    commandPlace = commandPlace && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(text) || RUNS_THE_NEXT_WORD.has(text));
    redirect = false;
  }
  return words;
}

/** The index just past the quote that closes the one at `open` (a `"` may be escaped inside). */
function closing(command: string, open: number, quote: string): number {
  for (let i = open + 1; i < command.length; i++) {
    if (quote === '"' && command[i] === '\\') i++;
    else if (command[i] === quote) return i + 1;
  }
  return command.length;
}

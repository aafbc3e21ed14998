import { parse, type ParseEntry } from 'shell-quote';
import { braceWords } from './brace-words.js';
import { readShellText, type ShellText } from './shell-text.js';

/**
 * A command line cut into what a shell would run, well enough to see what a person approving it
 * should look at twice: its simple commands (words, output redirection targets, the pipeline
 * stage they are), and the command lines nested in it (`$(…)`, backticks, `sh -c '…'`, `eval`).
 * Not a shell: a line it cannot read fully still yields what it could read, and a caller that
 * needs certainty (a rule's `prefix` match) asks `isSimpleCommand` instead.
 */
export interface SimpleCommand {
  /** Its words, environment assignments (`A=b`) included, as the shell would see them unquoted. */
  words: string[];
  /** Where its output is redirected (`> f`, `>> f`, `&> f`): the target words. */
  writes: string[];
  /** Its place in a pipeline: 0 first (or alone), 1 the command after the first `|`… */
  stage: number;
}

/**
 * Every operator shell-quote reports; the ones that end a simple command and the ones that
 * redirect. `<>` opens its file for reading and writing (and creates it): a write too. An input
 * redirection's word (`< f`, `<<< text`, `<< EOF`, `<&-`) is no word of the command.
 */
const REDIRECTS = new Set(['>', '>>', '>|', '&>', '&>>', '>&', '<>']);
const INPUTS = new Set(['<', '<<', '<<-', '<<<', '<&']);
const PIPES = new Set(['|', '|&']);

/**
 * Variables are kept as written (`$HOME`), not expanded to the gateway's own environment. An
 * expansion that is more than a name keeps its braces (`${P%/x}`, `${P/x/m}`): its `/` is its own,
 * not a folder's (`$P%/x` would name a program `x`). A `$` before no name is a `$` to bash
 * (`SH$^ELL`, `a$ b`), where shell-quote made it `${}`.
 */
const keepVariables = (name: string): string => (name === '' ? '$' : /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])$/.test(name) ? `$${name}` : `\${${name}}`);

/** What stands in the outer line for a nested command line (`$(…)`, backticks), read on its own. */
const SUBSTITUTED = '$CHATTY_SUBSTITUTION';

/**
 * The last long line parsed, kept: one request's line is read by the danger tags, by every deny
 * rule and for its proposals (each a parse of up to 16 Ki characters). Short lines (a rule's own
 * text, read in between) are cheap and not kept. Read only by its callers.
 */
const KEPT_FROM_CHARS = 256;
let lastParsed: { text: string; entries: readonly ParseEntry[] } | undefined;

function words(text: string): readonly ParseEntry[] {
  if (text.length < KEPT_FROM_CHARS) return parsed(text);
  if (lastParsed?.text !== text) lastParsed = { text, entries: parsed(text) };
  return lastParsed.entries;
}

function parsed(line: string): ParseEntry[] {
  // `line` is already read for comments, continued lines and heredocs (`shell-text.ts`): no `#`
  // left in it starts a comment, and each new line that ends a command is a `;`.
  try {
    return parse(line, keepVariables);
  } catch {
    // A line it cannot read (`${x:-y}`): read again with every `$` taken literally, so that the
    // commands around it are still seen (the variable's text is kept as written either way).
    return parse(line.replaceAll('$', '\\$'), keepVariables);
  }
}

/** The last long text read for its lines, kept (as `words`). */
let lastText: (ShellText & { text: string; flat: boolean }) | undefined;
function shellText(text: string, flat: boolean): ShellText {
  if (text.length < KEPT_FROM_CHARS) return readShellText(text, flat);
  if (lastText?.text !== text || lastText.flat !== flat) lastText = { text, flat, ...readShellText(text, flat) };
  return lastText;
}

/** The simple commands of `text`, and whether it was read whole (a shell text followed to its end, each nested line read). */
export interface ReadCommands {
  commands: SimpleCommand[];
  complete: boolean;
}

/** The simple commands of `text`, nested command lines included (each read on its own). */
export function simpleCommands(text: string): SimpleCommand[] {
  return readCommands(text).commands;
}

/**
 * As `simpleCommands`, and whether all of it was read: not when the text could not be followed to
 * its end (`shell-text.ts`: then it is also read flat), shell-quote could not read it, or a
 * substitution is nested deeper than four: a deny rule then fails closed.
 */
export function readCommands(given: string, depth = 0): ReadCommands {
  // A nested line is part of one already read flat when it could not be followed.
  const reading = shellText(given, depth === 0);
  const text = reading.readable;
  let complete = reading.complete;
  const found: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], writes: [], stage: 0 };
  let redirect = false;
  let input = false;
  /** Whether the entry just read was a word of the command (an fd number before a redirection is not). */
  let lastWasWord = false;
  const end = (nextStage: number): void => {
    if (current.words.length > 0 || current.writes.length > 0) found.push(current);
    current = { words: [], writes: [], stage: nextStage };
  };
  // Each nested command line stands as one word in the outer line (`$(echo rm) -rf ~` is a
  // program the gateway cannot name, with `-rf ~`), and is read on its own below. Where they lie
  // comes from the reader that knows quoting (a quoted `'$('` opens none).
  const nested = reading.substitutions;
  const pieces: string[] = [];
  let from = 0;
  for (const { start, end: stop } of nested) {
    pieces.push(text.slice(from, start), SUBSTITUTED);
    from = stop;
  }
  const outer = pieces.join('') + text.slice(from);
  let entries: readonly ParseEntry[];
  try {
    entries = words(outer);
  } catch {
    entries = [];
    complete = false;
  }
  for (const entry of entries) {
    const wasWord = lastWasWord;
    lastWasWord = false;
    if (typeof entry === 'string') {
      if (redirect) {
        redirect = false;
        if (!/^\d+$/.test(entry)) current.writes.push(entry);
      } else if (input) input = false;
      else {
        current.words.push(entry);
        lastWasWord = true;
      }
      continue;
    }
    if ('comment' in entry) continue;
    if (entry.op === 'glob') {
      current.words.push(entry.pattern);
      continue;
    }
    const redirects = REDIRECTS.has(entry.op) || INPUTS.has(entry.op);
    // `2>/dev/null`, `1>out`, `0<in`: shell-quote gives the fd number as a word of its own. Read
    // as the fd (`make deploy 2 >x` too, which a shell would pass `2` to): a word fewer only
    // widens what a deny rule covers, and a prefix never covers a redirection.
    if (redirects && wasWord && /^\d+$/.test(current.words.at(-1)!)) current.words.pop();
    // An operator where a redirection's word should be (`cat << ; make deploy`): that word is missing, the next command's is not it.
    redirect = REDIRECTS.has(entry.op);
    input = INPUTS.has(entry.op);
    if (PIPES.has(entry.op)) end(current.stage + 1);
    else if (!redirects) end(0); // `;`, `&&`, `||`, `&`, `(`, `)`, `<(`, `>(`: another command begins
  }
  end(0);
  // What the shell runs when it expands `$(…)` and backticks, bare or in double quotes (read
  // from the line: shell-quote cuts a backtick's command at its operators).
  for (const { innerStart, innerEnd } of nested) {
    if (depth >= 4) {
      complete = false;
      break;
    }
    const read = readCommands(text.slice(innerStart, innerEnd), depth + 1);
    found.push(...read.commands);
    complete &&= read.complete;
  }
  return { commands: found, complete };
}

/**
 * The words of `text` when it is one simple command and nothing else: no pipe, list, redirection,
 * substitution, variable, glob (`*`, `?`, `[…]`), brace expansion (`{a,b}`, `{1..9}`), new line
 * or comment; undefined otherwise. What a `prefix` rule may match: a person who remembered `cp *`
 * saw words, not a pattern the shell turns into other words (`approvals.js[o]n`). A `[` or a
 * brace pair is refused even quoted (errs toward asking).
 */
let lastSimple: { text: string; words: readonly string[] | undefined } | undefined;
export function isSimpleCommand(text: string): readonly string[] | undefined {
  if (text.length < KEPT_FROM_CHARS) return simpleCommandWords(text);
  if (lastSimple?.text !== text) lastSimple = { text, words: simpleCommandWords(text) };
  return lastSimple.words;
}

function simpleCommandWords(text: string): string[] | undefined {
  // `$"…"` too: bash's translated string, which shell-quote reads as a variable (`tar $"--to-command=…"`).
  if (/[\n\r`]|\$[({A-Za-z_0-9@*#?$!"-]/.test(text)) return undefined;
  // shell-quote reports `*` and `?` as globs, but gives `[…]` and `{…,…}` back as plain words.
  if (/[[\]]/.test(text) || braceWords(text)?.length !== 1) return undefined;
  let entries: ParseEntry[];
  try {
    entries = parse(text, keepVariables);
  } catch {
    return undefined;
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') return undefined; // an operator, a glob, a comment
    out.push(entry);
  }
  return out.length > 0 ? out : undefined;
}

import { parse, type ParseEntry } from 'shell-quote';

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

/** Every operator shell-quote reports; the ones that end a simple command and the ones that redirect. */
const REDIRECTS = new Set(['>', '>>', '>|', '&>', '&>>', '>&']);
const PIPES = new Set(['|', '|&']);

/** Variables are kept as written (`$HOME`), not expanded to the gateway's own environment. */
const keepVariables = (name: string): string => `$${name}`;

function words(text: string): ParseEntry[] {
  // shell-quote reads a new line as a space: a new line ends a command, so make it say so.
  return parse(text.replace(/\r?\n/g, ' ; '), keepVariables);
}

/** The simple commands of `text`, nested command lines included (each read on its own). */
export function simpleCommands(text: string, depth = 0): SimpleCommand[] {
  const found: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], writes: [], stage: 0 };
  let redirect = false;
  const end = (nextStage: number): void => {
    if (current.words.length > 0 || current.writes.length > 0) found.push(current);
    current = { words: [], writes: [], stage: nextStage };
  };
  let entries: ParseEntry[];
  try {
    entries = words(text);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (typeof entry === 'string') {
      if (redirect) {
        redirect = false;
        if (!/^\d+$/.test(entry)) current.writes.push(entry);
      } else current.words.push(entry);
      continue;
    }
    if ('comment' in entry) continue;
    if (entry.op === 'glob') {
      current.words.push(entry.pattern);
      continue;
    }
    if (REDIRECTS.has(entry.op)) redirect = true;
    else if (PIPES.has(entry.op)) end(current.stage + 1);
    else if (entry.op === '<') redirect = false;
    else end(0); // `;`, `&&`, `||`, `&`, `(`, `)`, `<(`, `>(`: another command begins
  }
  end(0);
  if (depth < 4) {
    // What the shell runs when it expands `$(…)` and backticks, quoted or not (read from the raw
    // line: shell-quote cuts a backtick's command at its operators).
    for (const inner of substitutions(text)) found.push(...simpleCommands(inner, depth + 1));
  }
  return found;
}

/** The command lines inside `$(…)`, `<(…)`, `>(…)` and backticks. */
function substitutions(word: string): string[] {
  const inner: string[] = [];
  for (const m of word.matchAll(/`([^`]*)`/g)) inner.push(m[1]!);
  const opening = /[$<>]\(/g;
  let at = word.search(opening);
  while (at >= 0) {
    let depth = 0;
    let i = at + 1;
    for (; i < word.length; i++) {
      if (word[i] === '(') depth++;
      else if (word[i] === ')' && --depth === 0) break;
    }
    inner.push(word.slice(at + 2, i));
    opening.lastIndex = i;
    const next = opening.exec(word);
    at = next ? next.index : -1;
  }
  return inner;
}

/**
 * The words of `text` when it is one simple command and nothing else: no pipe, list, redirection,
 * substitution, variable, new line or comment; undefined otherwise. What a `prefix` rule may match.
 */
export function isSimpleCommand(text: string): string[] | undefined {
  if (/[\n\r`]|\$[({A-Za-z_0-9@*#?$!-]/.test(text)) return undefined;
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

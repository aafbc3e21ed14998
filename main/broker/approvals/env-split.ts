/**
 * `env -S STRING`'s string read as GNU env reads it, not as a shell would: its own escapes
 * (`\_` separates words outside double quotes, `\c` ends the string, `\t`, `\n`…), `${NAME}`
 * expanded, quotes (`'…'`, `"…"`), a `#` starting a word a comment. Read as a shell line, `rm\_-rf\_x`
 * was one word naming no program: untagged, and a deny rule `rm *` let it through while env ran
 * `rm -rf x`.
 */

/**
 * The words env makes of `text` (a `${NAME}` kept as written: its value is not known here), or
 * undefined when env refuses it (an escape it does not take, a `$` not of `${NAME}`, a quote not
 * closed): then nothing runs.
 */
export function envStringWords(text: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined; // the word being built; undefined between words
  let single = false;
  let double = false;
  const add = (chars: string): void => {
    word = (word ?? '') + chars;
  };
  const end = (): void => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" && !double) {
      single = !single;
      add(''); // a quote starts a word, empty or not
      continue;
    }
    if (c === '"' && !single) {
      double = !double;
      add('');
      continue;
    }
    if (/[ \t\n\v\f\r]/.test(c) && !single && !double) {
      end();
      continue;
    }
    if (c === '#' && word === undefined) return words; // a comment to the end
    if (c === '\\' && !(single && text[i + 1] !== '\\' && text[i + 1] !== "'")) {
      const next = text[++i];
      if (next === undefined) return undefined;
      if ('"#$\'\\'.includes(next)) add(next);
      else if (next === '_') {
        if (double) add(' ');
        else end();
      } else if (next === 'c') {
        if (double) return undefined;
        end();
        return words;
      } else if ('fnrtv'.includes(next)) add({ f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' }[next as 'f' | 'n' | 'r' | 't' | 'v']);
      else return undefined;
      continue;
    }
    if (c === '$' && !single) {
      VARIABLE.lastIndex = i;
      const name = VARIABLE.exec(text)?.[0];
      if (name === undefined) return undefined;
      add(name); // its value is the environment's: a variable to the reader
      i += name.length - 1;
      continue;
    }
    add(c);
  }
  if (single || double) return undefined;
  end();
  return words;
}

/** `${NAME}`, the one expansion env takes, read where it starts. */
const VARIABLE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/y;

/** Words as a shell line that reads back as them (`shellWord`). */
export function asShellLine(words: readonly string[]): string {
  return words.map(shellWord).join(' ');
}

/**
 * A word as one shell word: a plain word as it is, any other in double quotes (a `$NAME` stays a
 * variable and a `~` a home to the reader, toward tagging).
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./~-]+$/.test(word) ? word : `"${word.replace(/["\\`]/g, '\\$&')}"`;
}

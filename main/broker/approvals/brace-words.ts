/** At most this many words are made of one word's braces; past them it could be any word (`braceWords` answers undefined). */
export const MAX_BRACE_WORDS = 64;

/**
 * The words bash makes of `word`'s brace expansions (`{notes.json,.config/x}`: `notes.json`,
 * `.config/x`; `a{b,c}d`: `abd`, `acd`), nested ones too; `[word]` when it has none. A sequence
 * (`{a..z}`, `{1..9}`) stands as `*` (any characters: the words a glob could match), and past
 * `MAX_BRACE_WORDS` words it is undefined: could be anything. Quotes are already gone from a word.
 */
export function braceWords(word: string): string[] | undefined {
  const done: string[] = [];
  const todo = [word];
  while (todo.length > 0) {
    const next = todo.pop()!;
    const found = firstBraces(next);
    if (found === undefined) done.push(next);
    else for (const part of found.parts) todo.push(next.slice(0, found.open) + part + next.slice(found.close + 1));
    if (done.length + todo.length > MAX_BRACE_WORDS) return undefined;
  }
  return done.reverse();
}

/** The first `{…}` of `word` that bash expands (a `,` or `..` at its own level), and its parts. */
function firstBraces(word: string): { open: number; close: number; parts: string[] } | undefined {
  for (let open = word.indexOf('{'); open >= 0; open = word.indexOf('{', open + 1)) {
    const parts: string[] = [];
    let depth = 0;
    let from = open + 1;
    for (let i = open + 1; i < word.length; i++) {
      const c = word[i]!;
      if (c === '{') depth++;
      else if (c === '}' && depth > 0) depth--;
      else if (c === ',' && depth === 0) {
        parts.push(word.slice(from, i));
        from = i + 1;
      } else if (c === '}') {
        const last = word.slice(from, i);
        if (parts.length > 0) return { open, close: i, parts: [...parts, last] };
        if (/^[^{}]*\.\.[^{}]*$/.test(last)) return { open, close: i, parts: ['*'] };
        break; // `{x}`: no expansion here; a later brace may be one
      }
    }
  }
  return undefined;
}

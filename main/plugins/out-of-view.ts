/**
 * Text a plugin wrote for a model that a person would not see: a person's tool list shows the
 * first lines of a description, the model reads all of it. Limits (documented in docs/plugins.md):
 * at most two line breaks in a row (one blank line: paragraphs stay), no run of more than 8
 * spaces or tabs (indented examples stay), and at most `MAX_SHOWN_TEXT_CHARS` characters.
 */
export const MAX_LINE_BREAKS_IN_A_ROW = 2;
export const MAX_BLANK_RUN = 8;
/** A description a person reads whole: the longest bundled example's is under 300 characters. */
export const MAX_SHOWN_TEXT_CHARS = 2_000;

/** Why `text` would put words out of a person's view, or `undefined`. */
export function outOfViewIn(text: string): string | undefined {
  const breaks = /(?:\r?\n|\r)(?:[ \t]*(?:\r?\n|\r)){2,}/.exec(text);
  if (breaks) return `holds more than ${MAX_LINE_BREAKS_IN_A_ROW} line breaks in a row at character ${[...text.slice(0, breaks.index)].length + 1}, which pushes what follows out of view (one blank line between paragraphs at most)`;
  const blanks = new RegExp(`[ \\t]{${MAX_BLANK_RUN + 1},}`).exec(text);
  if (blanks) return `holds a run of ${blanks[0].length} spaces or tabs at character ${[...text.slice(0, blanks.index)].length + 1}, which pushes what follows out of view (at most ${MAX_BLANK_RUN} in a row)`;
  const chars = [...text].length;
  if (chars > MAX_SHOWN_TEXT_CHARS) return `is ${chars} characters long, more than the ${MAX_SHOWN_TEXT_CHARS} a person reads in a tool list (write it shorter)`;
  return undefined;
}

/**
 * Task text typed on one line, the same for `run <agent> <prompt…>` and a line at `serve`'s
 * prompt: `\n` is a new line and `\\` a backslash (so `\\n` is a backslash and an n); any other
 * backslash stays as it is. A script of several instructions fits on one line, and a nested
 * script keeps its own `\n` by writing `\\n` (the scripted agent unescapes one more level in
 * `invoke` and `write`, by this same rule: it lives here so both the CLI and the agents import it).
 */
export function decodeTaskText(line: string): string {
  return line.replace(/\\([\\n])/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
}

/** The inverse, for showing a task's text on one line: what `decodeTaskText` reads back as `text`. */
export function encodeTaskText(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

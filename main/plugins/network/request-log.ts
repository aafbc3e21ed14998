/** The most characters of one word the guest chose (a method, a host) a request's line shows. */
export const MAX_LINE_WORD_CHARS = 200;
/** The most characters of the reason a refused request's line shows (it may name the host again). */
const MAX_REASON_CHARS = 400;

/**
 * The module log's line for one request: method, host and port, then the status and body bytes
 * or why it was refused. Never the path, query, headers or bodies: they carry tokens and data.
 * What the guest chose is clipped, each word on its own, so every line is short and still says
 * where the request went and how it ended: cut whole at a line's cap, a host of a million letters
 * left neither the port nor `refused:` in its line, and four such lines used up the call's budget
 * of request lines.
 */
export function requestLine(method: string, target: string, outcome: { status: number; bytes: number } | { refused: string }): string {
  const head = `network: ${clipped(method, MAX_LINE_WORD_CHARS)} ${clipped(target, MAX_LINE_WORD_CHARS)}`;
  if ('refused' in outcome) return `${head} refused: ${clipped(outcome.refused, MAX_REASON_CHARS)}`;
  return `${head} → ${outcome.status}, ${outcome.bytes} bytes`;
}

/** `text`, or its first `max` UTF-16 units (never half a pair) and how long it was. */
export function clipped(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

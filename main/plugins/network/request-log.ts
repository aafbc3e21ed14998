/**
 * The module log's line for one request: method, host and port, then the status and body bytes
 * or why it was refused. Never the path, query, headers or bodies: they carry tokens and data.
 */
export function requestLine(method: string, target: string, outcome: { status: number; bytes: number } | { refused: string }): string {
  if ('refused' in outcome) return `network: ${method} ${target} refused: ${outcome.refused}`;
  return `network: ${method} ${target} → ${outcome.status}, ${outcome.bytes} bytes`;
}

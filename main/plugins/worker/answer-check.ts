/**
 * The backstop after the lift: whatever the meter let through, an answer over the cap never
 * leaves the worker. Counts UTF-8 bytes of every string the answer carries.
 */
import { OutputTooLarge } from './lift-meter.js';
import type { ToolOutcome } from './protocol.js';

export function checkAnswer<T>(what: 'metadata' | 'list-tools' | 'invoke-tool', value: T, maxBytes: number): T {
  const bytes = textBytes(value, 0, maxBytes);
  if (bytes > maxBytes) throw new OutputTooLarge(bytes, maxBytes, what);
  return value;
}

/** Sums the UTF-8 length of every string in a lifted value, stopping once past `limit`. */
function textBytes(value: unknown, sum: number, limit: number): number {
  if (sum > limit) return sum;
  if (typeof value === 'string') return sum + Buffer.byteLength(value, 'utf8');
  if (Array.isArray(value)) {
    for (const item of value) {
      sum = textBytes(item, sum, limit);
      if (sum > limit) return sum;
    }
    return sum;
  }
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) {
      sum = textBytes(item, sum, limit);
      if (sum > limit) return sum;
    }
  }
  return sum;
}

export type { ToolOutcome };

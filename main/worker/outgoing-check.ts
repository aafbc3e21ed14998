import type { z } from 'zod';

/**
 * Checks what the library is about to send against the wire's own schema. The broker closes the
 * connection on a frame it cannot decode, which would end every task and call of this worker for
 * one bad argument; the mistake is the caller's, so it is thrown where the caller made it, and
 * nothing is sent. A value outside the allowed ones (a state that is not one, a negative id) is a
 * `RangeError`; anything else (a wrong type, a missing or unknown field) a `TypeError`. The
 * message names the call and the field: `events.status: state must be one of "submitted",
 * "working", not "thinking"`.
 */
export function checkOutgoing(schema: z.ZodType, value: unknown, call: string, under: readonly PropertyKey[] = []): void {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return;
  const issue = result.error.issues[0]!;
  const path = issue.path.slice(under.length).map(String);
  const field = path.length === 0 ? 'the value' : path.join('.');
  const message = `${call}: ${field} ${describe(issue)}`;
  throw issue.code === 'invalid_value' || issue.code === 'too_small' || issue.code === 'too_big' ? new RangeError(message) : new TypeError(message);
}

function describe(issue: z.core.$ZodIssue): string {
  const got = 'input' in issue ? ` (got ${shown(issue.input)})` : '';
  switch (issue.code) {
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, not ${shown(issue.input)}`;
    case 'invalid_type':
      return issue.input === undefined ? `is required (${kind(issue.expected)})` : `must be ${kind(issue.expected)}${got}`;
    case 'too_small':
      return `must be ${issue.inclusive ? 'at least' : 'more than'} ${String(issue.minimum)}${got}`;
    case 'too_big':
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}${got}`;
    case 'unrecognized_keys':
      return `has ${issue.keys.length === 1 ? 'a field' : 'fields'} the wire does not take: ${issue.keys.join(', ')}`;
    default:
      return `is not accepted: ${issue.message}${got}`;
  }
}

/** zod's name of a type as a phrase: `a string`, `an integer`, `an array`. */
function kind(expected: string): string {
  if (expected === 'int') return 'an integer';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/** A short picture of the value that was given. */
function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

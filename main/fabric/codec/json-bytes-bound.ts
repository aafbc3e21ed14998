/**
 * An upper bound on the UTF-8 bytes of `JSON.stringify(value)`, without encoding it: a walk that
 * counts each string unit as 6 bytes (the most one takes, escaped as `\uXXXX`). It answers "surely
 * fits" for a value far under a cap, so that only one near it is encoded to be measured exactly.
 * A value JSON cannot carry (a BigInt, a cycle) counts as unbounded: the exact measure says why.
 */
export function jsonBytesAtMost(value: unknown): number {
  return bound(value, new Set());
}

/** The most a number takes (`-1.2345678901234567e-308`). */
const NUMBER_BYTES = 24;

function bound(value: unknown, path: Set<object>): number {
  switch (typeof value) {
    case 'string':
      return value.length * 6 + 2;
    case 'number':
      return NUMBER_BYTES;
    case 'boolean':
      return 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      return 4; // left out, or `null` in an array
    case 'object':
      return value === null ? 4 : boundObject(value, path);
    default:
      return Infinity;
  }
}

function boundObject(value: object, path: Set<object>): number {
  if (path.has(value) || 'toJSON' in value) return Infinity;
  path.add(value);
  // Brackets, and a comma (or the closing bracket) after each entry.
  let bytes = 2;
  if (Array.isArray(value)) {
    for (const item of value) bytes += bound(item, path) + 1;
  } else {
    for (const [key, item] of Object.entries(value)) bytes += key.length * 6 + 3 + bound(item, path) + 1;
  }
  path.delete(value);
  return bytes;
}

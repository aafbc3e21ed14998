/** A parsed JSON object, as the hand-written frame checks read it. */
export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How many own keys a parsed JSON object has (it inherits none that are enumerable). */
export function keyCount(value: JsonObject): number {
  let n = 0;
  for (const _ in value) n++;
  return n;
}

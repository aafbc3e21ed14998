/**
 * A table's entry for a word of the line, its own only: a plain object's lookup also finds what
 * every object inherits (`constructor`, `toString`, `__proto__`), so `git constructor -x` or
 * `tmux toString -x` took a function for a table's letters and the danger reading threw: the
 * request got an error and no audit row.
 */
export function ownEntry<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

// Paths held by the bridges attached (workspaces, trust files, the ways folders were named by),
// each counted: a path stays held while any bridge holding it is attached.

/** Adds one holder to each of `keys` in `counts`; returns the function that takes it off again (once). */
export function holdCounted(counts: Map<string, number>, keys: readonly string[]): () => void {
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    for (const key of keys) {
      const left = (counts.get(key) ?? 1) - 1;
      if (left === 0) counts.delete(key);
      else counts.set(key, left);
    }
  };
}

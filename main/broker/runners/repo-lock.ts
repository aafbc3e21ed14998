/**
 * One git operation at a time per repository (keyed by its canonical common git directory, which
 * a repository's worktrees share), across every factory in this process. Choosing a free branch
 * and directory name and then creating them must not interleave with another create's choice.
 */
const tails = new Map<string, Promise<void>>();

export async function withRepoLock<T>(repo: string, run: () => Promise<T>): Promise<T> {
  const before = tails.get(repo) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = before.then(() => mine);
  tails.set(repo, tail);
  await before;
  try {
    return await run();
  } finally {
    done();
    if (tails.get(repo) === tail) tails.delete(repo);
  }
}

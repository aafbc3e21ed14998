/**
 * One git operation at a time per repository (keyed by its canonical common git directory, which
 * a repository's worktrees share), across every factory in this process. Choosing a free branch
 * and directory name and then creating them must not interleave with another create's choice.
 */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `run` once the operations queued before it in `repo` are done. When `signal` aborts while
 * it waits (its start was given up, its release's grace ran out behind a git that blocks), it
 * stops waiting and rejects with the signal's reason; the queue behind it is not held by it.
 */
export async function withRepoLock<T>(repo: string, run: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  const before = tails.get(repo) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = before.then(() => mine);
  tails.set(repo, tail);
  const letGo = () => {
    done();
    if (tails.get(repo) === tail) tails.delete(repo);
  };
  try {
    await untilAborted(before, signal);
  } catch (err) {
    // Given up while an earlier one still runs: the next in line waits for that one still.
    done();
    void tail.then(() => {
      if (tails.get(repo) === tail) tails.delete(repo);
    });
    throw err;
  }
  try {
    return await run();
  } finally {
    letGo();
  }
}

/** `turn` (which never rejects), or a rejection with `signal`'s reason when it aborts first. */
function untilAborted(turn: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return turn;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void turn.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/**
 * The CPU time (user + system, in ms) this process spends while `action` runs: what the work
 * costs the gateway's process, whatever else the machine is doing. A wall-clock stall meter on a
 * loaded machine (CI with other suites beside it) counts the time the process waited for a core
 * as the work's own; CPU time does not. It bounds every stall from above: no one turn of the event
 * loop can take more CPU than all of them together.
 */
export async function cpuDuring<T>(action: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const before = process.cpuUsage();
  const result = await action();
  const used = process.cpuUsage(before);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}

/** cpuDuring for a synchronous action: its CPU time (user + system, in ms). */
export function cpuDuringSync<T>(action: () => T): { result: T; cpuMs: number } {
  const before = process.cpuUsage();
  const result = action();
  const used = process.cpuUsage(before);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PluginLoadError } from '../errors.js';
import { BUILD_GUARD_SOURCE } from './build-guard.js';

/** How long a build in a child process may take before it is stopped (they take 15–75 s). */
export const BUILD_TIMEOUT_MS = 5 * 60_000;
/** What is kept of a build's stderr for its failure message (the end of it). */
const MAX_STDERR_BYTES = 64 * 1024;

const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The process groups of the builds running now: stopped if this process exits first (their guards stop them too, when this process is gone however it went). */
const running = new Set<number>();
let stopOnExit = false;

function stopGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL'); // the whole group: the build and the wizer it started
  } catch {
    // already gone
  }
}

export interface BuildProcessOptions {
  /** Stopped (the child and everything it started) after this long; default `BUILD_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Aborting it stops the build the same way (the watcher is closing, `serve` is stopping). */
  signal?: AbortSignal;
}

/**
 * `plugin build <dir>` in a child process of its own: how a gateway builds while it serves (a
 * watched plugin's rebuild, a bundled example built behind `serve`'s ready line). In the gateway's
 * own thread a build would stall everything it serves: componentize-js runs wizer with
 * `spawnSync` (measured: 48 s without a turn of the event loop), and wizer runs the plugin's
 * top-level code, so a source that loops there would stall it forever. The child (a guard,
 * `build-guard.ts`, that starts the build) leads its own process group, so a build stopped (its
 * deadline, `signal`, or this process exiting) takes wizer with it; and the guard stops the group
 * when this process, or the worker thread that started it, is gone without stopping it (killed,
 * terminated: no handler here runs then). Rejects with `PluginLoadError` saying why.
 */
export function buildInChildProcess(dir: string, options: BuildProcessOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? BUILD_TIMEOUT_MS;
  const entry = fileURLToPath(new URL(FROM_SOURCE ? './build-process-entry.ts' : './build-process-entry.js', import.meta.url));
  // Not import.meta.resolve: sources loaded by tsx's require hook (a worker thread on Node 20, which gets no module hooks) have none.
  const args = [...(FROM_SOURCE ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : []), entry, dir];
  const electron = process.versions['electron'] !== undefined ? { ELECTRON_RUN_AS_NODE: '1' } : {};
  return new Promise<void>((resolve, reject) => {
    if (options.signal?.aborted) return reject(new PluginLoadError('the build was stopped before it started'));
    // The guard (build-guard.ts) leads the group and starts the build in it; its stdin is a pipe
    // never written, whose end here closes however this process or thread goes: the group is stopped then.
    const child = spawn(process.execPath, ['-e', BUILD_GUARD_SOURCE, '--', ...args], { detached: true, stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, ...electron } });
    child.stdin.on('error', () => undefined); // the guard gone first: nothing is written, nothing lost
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_STDERR_BYTES);
    });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    if (!stopOnExit) {
      stopOnExit = true;
      process.once('exit', () => running.forEach(stopGroup));
    }
    let stopped: string | undefined;
    const stop = (why: string): void => {
      stopped ??= why;
      if (pid !== undefined) stopGroup(pid);
    };
    const timer = setTimeout(() => stop(`it took longer than ${timeoutMs / 1000} s and was stopped`), timeoutMs);
    const onAbort = (): void => stop('the build was stopped: its gateway is closing');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const ended = (): void => {
      if (pid !== undefined) running.delete(pid);
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.once('error', (err) => {
      ended();
      reject(new PluginLoadError(`the build could not start: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      ended();
      if (stopped !== undefined) return reject(new PluginLoadError(stopped));
      if (code === 0) return resolve();
      reject(new PluginLoadError(failureOf(stderr) ?? `the build ended with ${signal ?? `status ${code}`}`));
    });
  });
}

/** Longest end of a build's stderr shown when it did not say why it failed (it crashed). */
const MAX_SHOWN_STDERR = 2_000;

/** Why the build failed: the entry's `{"buildFailed": …}` line, else the end of what it printed. */
function failureOf(stderr: string): string | undefined {
  const lines = stderr.trim().split('\n');
  try {
    const last: unknown = JSON.parse(lines.at(-1) ?? '');
    if (typeof last === 'object' && last !== null && typeof (last as { buildFailed?: unknown }).buildFailed === 'string') return (last as { buildFailed: string }).buildFailed;
  } catch {
    // not the entry's line: it ended some other way
  }
  const tail = stderr.trim().slice(-MAX_SHOWN_STDERR);
  return tail === '' ? undefined : tail;
}

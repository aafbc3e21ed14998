import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { shellWord } from '../../main/cli/shell-word.js';
import { unixRequest } from './http.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));
/** tsx's loader by URL: `--import tsx` would be looked up from the child's working directory. */
const TSX = import.meta.resolve('tsx');
/** The command `serve --agent asker=<this>` runs: test/cli/fixtures/approvals-worker.ts (the worker that asks what it is told to). */
export const APPROVALS_WORKER = [process.execPath, '--import', TSX, fileURLToPath(new URL('../cli/fixtures/approvals-worker.ts', import.meta.url))].map(shellWord).join(' ');

/**
 * Runs `chatty-gateway …` from the TypeScript sources, as a real child process, in `cwd` (the
 * repository by default). tsx is resolved from the repository, so any `cwd` works.
 */
export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env, cwd: string = REPO_ROOT): ChildProcessWithoutNullStreams {
  return leftToEnd(spawn(process.execPath, ['--import', TSX, BIN, ...args], { cwd, env, stdio: 'pipe' }));
}

/**
 * Every child spawned here that has not exited yet. A test that fails or times out before it ends
 * its child leaves the child waiting on its stdin, and the child's pipes keep the test file's
 * process alive: the file, and the whole `npm test`, would never end (seen on a loaded CI
 * machine). Whatever is still running when the file's tests are done is killed.
 */
const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill('SIGKILL');
});

function leftToEnd<T extends ChildProcess>(child: T): T {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Runs `chatty-gateway …` on a real pseudo-terminal (util-linux `script`), its output on the
 * child's stdout. The gateway `exec`s over the shell `script` starts, so that Ctrl-C reaches it
 * alone and its own exit status is the one seen: a non-interactive dash (what `script` runs when
 * SHELL is unset, as on a fresh CI machine) would itself die of the SIGINT with 130. SHELL is
 * pinned so the test runs the same wherever it runs.
 */
export function spawnCliOnPty(args: readonly string[], cwd: string): ChildProcessWithoutNullStreams {
  const command = `exec ${[process.execPath, '--import', TSX, BIN, ...args].map(shellWord).join(' ')}`;
  return leftToEnd(spawn('script', ['-qfec', command, '/dev/null'], { cwd, env: { ...process.env, SHELL: '/bin/sh' }, stdio: 'pipe' }));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command that ends by itself and gives what it printed and its exit code. */
export async function runCli(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const child = spawnCli(args, options.env, options.cwd);
  child.stdin.end();
  const [stdout, stderr, status] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
  return { code: status.code, stdout, stderr };
}

/**
 * A fresh directory under the system temp dir with no package.json in it or above it, as a user's
 * plugins folder elsewhere would be (where electron-log finds no app name, for one). Throws if
 * the temp dir itself sits under a package, since the tests made for it would then prove nothing.
 */
export function outsideAnyPackage(prefix = 'chatty-nopkg-'): { path: string; remove: () => void } {
  const path = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  for (let dir = path; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) throw new Error(`${dir} has a package.json; set TMPDIR outside any package`);
    if (dirname(dir) === dir) break;
  }
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The child's first stdout line; the stream stays readable for what follows (via `collect`). */
export function firstLine(child: ChildProcessWithoutNullStreams): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += String(chunk);
      const newline = buffered.indexOf('\n');
      if (newline < 0) return;
      child.stdout.off('data', onData);
      child.stdout.off('end', onEnd);
      child.stdout.pause();
      const rest = buffered.slice(newline + 1);
      if (rest) child.stdout.unshift(Buffer.from(rest));
      resolve(buffered.slice(0, newline));
    };
    const onEnd = (): void => {
      void collect(child.stderr).then((stderr) => reject(new Error(`no line before stdout closed; stderr: ${stderr}`)));
    };
    child.stdout.on('data', onData);
    child.stdout.on('end', onEnd);
  });
}

/** Everything a stream still has to say, as text. */
export async function collect(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

/** Resolves with the exit code (or signal) once the child has exited. */
export async function exited(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode };
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  return { code, signal };
}

/** The names of the modules a `serve --json` child serves: its ready line, then `GET /` on its socket with its token. */
export async function servedModuleNames(serve: ChildProcessWithoutNullStreams): Promise<string[]> {
  const ready = JSON.parse(await firstLine(serve)) as { socket: string; token: string };
  const auth = { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` };
  const index = JSON.parse((await unixRequest(ready.socket, { path: '/', headers: auth })).body) as { modules: { name: string }[] };
  return index.modules.map((m) => m.name);
}

/** One of a child's output streams, kept as it arrives, with a wait on what it holds. */
export interface WatchedOutput {
  /** Everything written so far. */
  text(): string;
  /** Resolves once `check()` holds; fails, showing `show()`, if the child exits first (or when `late` rejects). */
  until(check: () => boolean, what: string, show?: () => string, late?: Promise<never>): Promise<void>;
}

/** Watches `stream` of `child` (its stdout or stderr); `ended` is the child's `exited(child)`. */
export function watchOutput(child: ChildProcessWithoutNullStreams, stream: NodeJS.ReadableStream, ended: Promise<unknown>): WatchedOutput {
  let text = '';
  const waiters: (() => void)[] = [];
  stream.on('data', (chunk: Buffer | string) => {
    text += String(chunk);
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    text: () => text,
    async until(check, what, show = () => text, late) {
      while (!check()) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`serve exited before ${what}:\n${show()}`);
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), ended, ...(late ? [late] : [])]);
      }
    },
  };
}

/** A child on a pseudo-terminal (`spawnCliOnPty`), read as a person reads its screen. */
export interface PtyScreen {
  /** The screen as it reads: `\r\n` as new lines, a row erased (`\r`, erase-line) to be written over gone. */
  screen(): string;
  /** Waits until the screen, after `from` characters, holds `text`; returns where it ends. Fails, showing the screen, after `seconds` (or when the child exits first): a hang guard, 2 minutes by default, since a loaded CI machine took over a minute to start a child. */
  until(text: string, from?: number): Promise<number>;
}

/** Watches `child`'s stdout (a pty's output: its stdout and stderr in one); `ended` is `exited(child)`. */
export function ptyScreen(child: ChildProcessWithoutNullStreams, ended: Promise<unknown>, seconds = 120): PtyScreen {
  child.stdout.setEncoding('utf8');
  const out = watchOutput(child, child.stdout, ended);
  const screen = (): string => out.text().replaceAll('\r\n', '\n').replace(/[^\n]*\r\x1b\[K/g, '');
  return {
    screen,
    async until(text, from = 0) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${JSON.stringify(text)} on the screen after ${seconds} s:\n${screen()}`)), seconds * 1000);
      });
      try {
        await out.until(() => screen().includes(text, from), JSON.stringify(text), screen, late);
        return screen().indexOf(text, from) + text.length;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));

/** Runs `chatty-gateway …` from the TypeScript sources, as a real child process. */
export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['--import', 'tsx', BIN, ...args], { cwd: REPO_ROOT, env, stdio: 'pipe' });
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

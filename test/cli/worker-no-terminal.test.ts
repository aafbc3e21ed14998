/**
 * Workers have no controlling terminal (docs/agents.md, "Workers and the terminal"): `serve` on a
 * real pseudo-terminal (util-linux `script`) starts each worker in a session of its own, so a
 * worker's `open('/dev/tty')` fails with ENXIO (it cannot TIOCSTI "y⏎" into the prompt nor repaint
 * it through /dev/tty). Since the worker is outside the terminal's process group, `serve` ends it
 * itself on Ctrl-C and when its terminal closes (SIGHUP). The worker (fixtures/tty-worker.ts)
 * ignores SIGINT and SIGHUP, and holds a FIFO open until it exits: the FIFO's end is its exit.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { shellWord } from '../../main/cli/shell-word.js';
import { exited, ptyScreen, spawnCliOnPty } from '../helpers/cli.js';

const WORKER = [process.execPath, '--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./fixtures/tty-worker.ts', import.meta.url))].map(shellWord).join(' ');
/**
 * How long a stopping serve has to end its worker (the broker's SIGTERM comes at once). A hang
 * guard, not a speed check: a worker serve does not end runs for good (it ignores SIGINT and
 * SIGHUP), and a loaded machine may take seconds to start and stop processes.
 */
const DEADLINE_MS = 30_000;

const temporary: string[] = [];
const workers: number[] = [];
after(() => {
  for (const pid of workers) {
    try {
      process.kill(pid, 'SIGKILL'); // a test that failed leaves its worker behind
    } catch {}
  }
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** `serve` on a pty with the tty worker as agent `ttyw`, given one task; resolves once the worker has reported. */
async function serveWithWorker() {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-worker-tty-'));
  temporary.push(dir);
  const modules = join(dir, 'modules');
  mkdirSync(modules);
  const runtimeDir = join(dir, 'run');
  const fifo = join(dir, 'report');
  execFileSync('mkfifo', [fifo]);
  const child = spawnCliOnPty(['serve', '--runtime-dir', runtimeDir, '--modules-dir', modules, '--no-bundled-agents', '--approvals', 'deny', '--agent', `ttyw=${WORKER}`], dir);
  const ended = exited(child as never);
  const { screen, until } = ptyScreen(child, ended);
  await until('\n> ');
  child.stdin.write(`ttyw ${fifo}\r`);
  // The FIFO: its first line is the worker's report; its end comes when the worker has exited.
  const report = createReadStream(fifo, { encoding: 'utf8' });
  let text = '';
  const firstLine = new Promise<string>((resolve, reject) => {
    report.on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.split('\n')[0]!);
    });
    report.on('error', reject);
  });
  const workerGone = new Promise<void>((resolve) => report.on('close', resolve));
  const [pid, tty] = (await firstLine).split(' ');
  workers.push(Number(pid));
  return {
    runtimeDir,
    screen,
    until,
    tty: tty!,
    pid: Number(pid),
    type: (keys: string) => void child.stdin.write(keys),
    /** Kills `script` (SIGKILL): the terminal's other end closes, as when the person closes its window, and serve (its session leader) gets SIGHUP. */
    hangUp: () => child.kill('SIGKILL'),
    scriptPid: child.pid!,
    ended,
    /** Resolves once the worker has exited; fails after DEADLINE_MS. */
    async workerExited(): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`worker ${pid} still runs ${DEADLINE_MS} ms after serve was told to stop:\n${ps(Number(pid))}\n${screen()}`)), DEADLINE_MS);
      });
      try {
        await Promise.race([workerGone, late]);
      } finally {
        clearTimeout(timer);
      }
      // The kernel closes an exiting process's files a few ms before it is a zombie, so the FIFO
      // can end while /proc still shows it running (most runs on Node 22 and 24): wait for that too.
      await exitOf(Number(pid));
    },
  };
}

/** The `serve` process among `root`'s descendants (script → shell → node), found by its command line. */
function servePidUnder(root: number): number {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (pid !== root && cmdline.includes('serve')) return pid;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    if (children) queue.push(...children.split(' ').map(Number));
  }
  throw new Error(`no serve process under ${root}`);
}

/** Resolves once `pid` has exited (it is not our child, so its exit is looked for in /proc); fails after DEADLINE_MS. */
async function exitOf(pid: number): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (running(pid)) {
    if (Date.now() > deadline) throw new Error(`${pid} still runs ${DEADLINE_MS} ms after it was told to stop:\n${ps(pid)}`);
    await new Promise((resolve) => setTimeout(resolve, 10)); // a poll of /proc: no exit event reaches us for a process that is not our child
  }
}

/** The process's line in `ps`, for a failure's message. */
function ps(pid: number): string {
  try {
    return execFileSync('ps', ['-o', 'pid,ppid,pgid,sid,stat,args', '-p', String(pid)], { encoding: 'utf8' });
  } catch {
    return `(no process ${pid})`;
  }
}

/** Whether `pid` is still a running process (a zombie not yet reaped counts as gone). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('a worker serve started on a terminal has no controlling terminal: open("/dev/tty") fails with ENXIO', { timeout: 180_000 }, async () => {
  const s = await serveWithWorker();
  assert.equal(s.tty, 'ENXIO', s.screen());
  await s.until('tty ENXIO');
  s.type('\x03');
  await s.workerExited();
  assert.equal(running(s.pid), false);
  assert.equal((await s.ended).code, 0, s.screen());
});

test('Ctrl-C at serve ends its worker (one that ignores SIGINT), though the worker is outside the terminal’s process group', { timeout: 180_000 }, async () => {
  const s = await serveWithWorker();
  s.type('\x03');
  await s.workerExited();
  assert.equal(running(s.pid), false);
  assert.equal((await s.ended).code, 0, s.screen());
  assert.ok(s.screen().includes('chatty-gateway: stopped (SIGINT)'), s.screen());
});

test('closing serve’s terminal (SIGHUP) ends its worker (one that ignores SIGHUP) and removes the socket and token', { timeout: 180_000 }, async () => {
  const s = await serveWithWorker();
  const serve = servePidUnder(s.scriptPid);
  s.hangUp();
  await s.workerExited();
  assert.equal(running(s.pid), false);
  await s.ended; // \`script\`, killed at once; serve itself goes on stopping after its worker ended
  await exitOf(serve);
  assert.ok(!existsSync(join(s.runtimeDir, 'gateway.sock')), 'the socket was removed');
  assert.ok(!existsSync(join(s.runtimeDir, 'gateway.token')), 'the token was removed');
});

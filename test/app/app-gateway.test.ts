// The desktop app's gateway, started as main.ts starts it (without Electron): the bundled agents
// are published, a task runs in a worker process, and quitting (before-quit held, the teardown
// run, quit again) reaps that worker and removes the socket and the token.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startAppGateway } from '../../main/app/app-gateway.js';
import { quitAfterStopping, Teardown, type QuitLog } from '../../main/app/lifecycle.js';
import type { ProgressEvent } from '../../main/fabric/wire/broker-to-worker.js';

const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-app-gw-')));
after(() => rmSync(home, { recursive: true, force: true }));

/** Electron's quit as the listener sees it; `exited` settles when a quit is let through. */
class FakeApp extends EventEmitter {
  private done: (() => void) | undefined;
  readonly exited = new Promise<void>((resolve) => (this.done = resolve));
  quit(): void {
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.done?.();
  }
}

/** This process's children that are `chatty-gateway worker`s: from /proc on Linux, else from ps. */
function workerChildren(): number[] {
  const processes: { pid: number; ppid: number; args: string[] }[] = [];
  if (existsSync('/proc/self/stat')) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        processes.push({ pid: Number(entry), ppid, args: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0') });
      } catch {
        // gone meanwhile
      }
    }
  } else {
    for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' }).split('\n')) {
      const [pid, ppid, ...args] = line.trim().split(/\s+/);
      if (pid !== undefined && ppid !== undefined) processes.push({ pid: Number(pid), ppid: Number(ppid), args });
    }
  }
  return processes.filter((p) => p.ppid === process.pid && p.args.includes('worker') && p.args.includes('--participant-fd')).map((p) => p.pid);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('the app publishes the bundled agents, runs a task in a worker, and quitting reaps it and removes the socket and token', async () => {
  const modules = join(home, 'modules');
  const workspace = join(home, 'workspace');
  mkdirSync(modules);
  mkdirSync(workspace);
  const lines: string[] = [];
  const log: QuitLog & { error(line: string, err?: unknown): void } = { info: (line) => lines.push(line), error: (line) => lines.push(`error: ${line}`) };
  const teardown = new Teardown(log);
  const env = { CHATTY_MODULES_DIR: modules, CHATTY_RUNTIME_DIR: join(home, 'run'), CHATTY_WORKSPACE: workspace };
  const { gateway, started, workspace: where } = await startAppGateway({ userData: join(home, 'user-data'), isPackaged: true, env, cwd: '/', log }, teardown);
  assert.deepEqual(where, { kind: 'directory', workspaceRoot: workspace });
  assert.ok(existsSync(started.socketPath) && existsSync(started.tokenPath));
  assert.ok(existsSync(join(home, 'user-data', 'plugins')), 'the user plugin folder exists');

  // An "always" rule is kept in the app's own file, in its user-data folder, owner-only.
  const rule = gateway.approvals.add({ effect: 'allow', kind: 'exec', agent: 'local-coder', match: { exact: 'echo kept' } });
  const file = join(home, 'user-data', 'approvals.json');
  assert.ok(readFileSync(file, 'utf8').includes(rule.id), 'the rule is in <userData>/approvals.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);

  const root = gateway.transport();
  const agents = (await root.listAgents()).map((a) => a.name).sort();
  assert.ok(agents.includes('local-coder') && agents.includes('local-reviewer'), agents.join(', '));

  let begun: () => void = () => {};
  const running = new Promise<void>((resolve) => (begun = resolve));
  const progress: ProgressEvent[] = [];
  const result = root.invoke('local-coder', 'say working\nsleep 600000', {
    onProgress: (event) => {
      progress.push(event);
      if (JSON.stringify(event).includes('working')) begun();
    },
  });
  // The worker said its first line; a task that ended before that fails here instead of hanging.
  const first = await Promise.race([running.then(() => undefined), result]);
  assert.equal(first, undefined, `the task ended before it ran: ${JSON.stringify(first)} (progress: ${JSON.stringify(progress)})`);
  const workers = workerChildren();
  assert.equal(workers.length, 1, 'one worker process runs the task');

  const app = new FakeApp();
  app.on('before-quit', quitAfterStopping(app, () => teardown.run(), log));
  app.quit();
  await app.exited;
  const outcome = await result;
  assert.equal(outcome.success, false, 'the task was cut short');
  for (const pid of workers) assert.equal(alive(pid), false, `worker ${pid} is reaped`);
  assert.deepEqual(workerChildren(), []);
  assert.equal(existsSync(started.socketPath), false, 'the socket is removed');
  assert.equal(existsSync(started.tokenPath), false, 'the token is removed');
  assert.ok(!lines.some((line) => line.startsWith('error:')), lines.join('\n'));
});

/**
 * A worker for the runner tests, built on main/worker. argv[2] is its mode, argv[3] (optional) a
 * marker file it creates first thing, so a test can tell whether it ever ran.
 *   report   – says hello, takes one task and answers it with one artifact: a JSON `Report` of
 *              where it runs (cwd, branch and HEAD as git sees them there, a few env variables,
 *              the task's spawn context), then `completed`
 *   commit   – the same, after committing a file `<its node name>.txt` on its branch
 *   stubborn – ignores SIGTERM (says so on stderr), says hello and never takes a task
 *   mute     – writes to stderr and never says hello (keeps the socket open)
 *   mute-stubborn – mute, and ignores SIGTERM too
 *   hangup-stubborn – ignores SIGTERM, writes to stderr, closes the socket without a hello, stays
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { WorkerSession, openParticipantFd, serveOneTask } from '../../../main/worker/index.js';

export interface Report {
  cwd: string;
  /** null when the worker's folder is in no git repository. */
  branch: string | null;
  head: string | null;
  files: string[];
  pid: number;
  env: Record<string, string | null>;
  spawnContext: unknown;
}

const mode = process.argv[2] ?? 'report';
const marker = process.argv[3];
if (marker) writeFileSync(marker, `${process.pid}\n`);

if (mode.endsWith('stubborn')) {
  process.on('SIGTERM', () => process.stderr.write('where-worker: SIGTERM ignored\n'));
}

const socket = openParticipantFd();
if (mode === 'mute' || mode === 'mute-stubborn' || mode === 'hangup-stubborn') {
  process.stderr.write('where-worker: starting\n'.repeat(500)); // more than the 8 KiB the broker keeps
  process.stderr.write('where-worker: fatal: no model configured\n');
  if (mode === 'hangup-stubborn') socket.destroy();
  setInterval(() => {}, 60_000); // stays, says nothing
} else {
  const card = { name: 'where-worker', description: 'says where it runs', version: '1.0.0', skills: [] };
  const { session, hello } = await WorkerSession.hello(socket, card);
  if (mode === 'stubborn') {
    setInterval(() => {}, 60_000);
  } else {
    const gitOut = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    await serveOneTask(session, async (task, events) => {
      if (mode === 'commit') {
        writeFileSync(`${hello.name}.txt`, `written by ${hello.name}\n`);
        gitOut('add', `${hello.name}.txt`);
        gitOut('-c', 'user.name=where-worker', '-c', 'user.email=worker@example.invalid', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', `${hello.name} was here`);
      }
      const gitOrNull = (...args: string[]) => {
        try {
          return gitOut(...args);
        } catch {
          return null;
        }
      };
      const envOf = (name: string) => process.env[name] ?? null;
      const report: Report = {
        cwd: process.cwd(),
        branch: gitOrNull('rev-parse', '--abbrev-ref', 'HEAD'),
        head: gitOrNull('rev-parse', 'HEAD'),
        files: readdirSync('.').sort(),
        pid: process.pid,
        env: { PWD: envOf('PWD'), GIT_DIR: envOf('GIT_DIR'), RUNNER_TEST: envOf('RUNNER_TEST') },
        spawnContext: task.params.spawnContext ?? null,
      };
      events.artifact(JSON.stringify(report), true);
      return { state: 'completed', message: `${hello.name} done` };
    });
    session.close();
  }
}

/**
 * The terminal prompt's guard time, on a real pseudo-terminal (util-linux `script`): keys typed
 * before a prompt appeared, or in its guard time after, answer nothing — they are dropped, said so,
 * and the prompt waits for a line typed after its cue (`[y/N]`) appeared. The fixture
 * (fixtures/terminal-guard.ts) runs the prompter alone with a guard of GUARD seconds, long enough
 * that keys typed on seeing the request always land in it.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, afterEach, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { shellWord } from '../../main/cli/shell-word.js';
import { exited, ptyScreen } from '../helpers/cli.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/terminal-guard.ts', import.meta.url));
const GUARD_MS = 1000;
const IGNORED = '(ignored keys typed before this prompt appeared)';

const temporary: string[] = [];
/** A test that failed leaves its fixture waiting: ending `script` hangs up its terminal. */
const running = new Set<ChildProcess>();
afterEach(() => {
  // SIGKILL: a SIGTERM waits, unacted, on a `script` left stopped (the suspend test failing midway), and held this file's process for good.
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** The fixture in `mode` on a pty; `go()` writes its FIFO. */
/** Whether the process is stopped (job control), from its state in /proc. */
function stopped(pid: string): boolean {
  return /^\d+ \(.*\) T /s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

function onPty(mode: 'typeahead' | 'guard' | 'switch' | 'tall' | 'suspend') {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-guard-pty-'));
  temporary.push(dir);
  const fifo = join(dir, 'go');
  execFileSync('mkfifo', [fifo]);
  const command = `exec ${[process.execPath, '--import', import.meta.resolve('tsx'), FIXTURE, mode, fifo, String(GUARD_MS)].map(shellWord).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: dir, env: { ...process.env, SHELL: '/bin/sh' }, stdio: 'pipe' });
  running.add(child);
  const ended = exited(child);
  const { screen, until } = ptyScreen(child, ended);
  return {
    screen,
    until,
    type: (keys: string) => void child.stdin.write(keys),
    /** `script` itself, which stops along with the fixture (util-linux's pty session does). */
    scriptPid: child.pid!,
    go: () => writeFile(fifo, 'go\n'),
    async ended(): Promise<number | null> {
      const status = await ended;
      child.stdin.end();
      return status.code;
    },
  };
}

test('type-ahead: a "y⏎" typed before the prompt appeared, read only after, does not approve it; a deliberate answer after the guard does', { timeout: 180_000 }, async () => {
  const s = onPty('typeahead');
  await s.until('type now\n');
  s.type('y\r');
  await s.until('type now\ny\n'); // the terminal itself echoed it: the keys wait in its buffer, unread
  await s.go();
  let at = await s.until('asker-0 (root → asker) asks to run: rm -rf ~/work\n');
  at = await s.until(`  approve? ${IGNORED}\n  approve? [y/N] `, at);
  assert.ok(!s.screen().includes('verdict'), s.screen());
  s.type('y\r');
  await s.until('y\n  approved\nverdict rm -rf ~/work: approved\n', at);
  assert.equal(await s.ended(), 0, s.screen());
});

test('guard: keys typed as the request appears are dropped unechoed, said so once the cue appears; then "n⏎" answers', { timeout: 180_000 }, async () => {
  const s = onPty('guard');
  let at = await s.until('asks to run: rm -rf ~/work\n');
  s.type('y\r'); // a paste, or a reflex, on seeing the request: inside the guard
  at = await s.until(`  approve? ${IGNORED}\n  approve? [y/N] `, at);
  assert.ok(!s.screen().includes('approved'), s.screen());
  assert.ok(!s.screen().slice(0, at).includes('y\n'), `the dropped keys were not echoed:\n${s.screen()}`);
  s.type('n\r');
  await s.until('n\n  denied\nverdict rm -rf ~/work: denied\n', at);
  assert.equal(await s.ended(), 0, s.screen());
});

test('guard: Enter held down through the guard answers nothing while it lasts', { timeout: 180_000 }, async () => {
  const s = onPty('guard');
  let at = await s.until('asks to run: rm -rf ~/work\n');
  s.type('\r\r\r\r\r\r\r\r'); // auto-repeat
  at = await s.until(`  approve? ${IGNORED}\n  approve? [y/N] `, at);
  assert.ok(!s.screen().includes('verdict'), s.screen());
  s.type('y\r');
  await s.until('verdict rm -rf ~/work: approved\n', at);
  assert.equal(await s.ended(), 0, s.screen());
});

test('switch: a "y⏎" meant for a withdrawn prompt, arriving as the next one appears, does not approve the next', { timeout: 180_000 }, async () => {
  const s = onPty('switch');
  let at = await s.until('asks to run: ls\n');
  at = await s.until('  approve? [y/N] ', at);
  await s.go(); // ls is withdrawn, and rm -rf asked in its place…
  at = await s.until('  (withdrawn: the agent no longer waits for this)\nverdict ls: denied\n', at);
  at = await s.until('asks to run: rm -rf ~/work\n', at);
  s.type('y\r'); // …as the person's "y⏎" for ls arrives
  at = await s.until(`  approve? ${IGNORED}\n  approve? [y/N] `, at);
  assert.ok(!s.screen().includes('verdict rm'), s.screen());
  s.type('n\r');
  await s.until('verdict rm -rf ~/work: denied\n', at);
  assert.ok(!s.screen().includes('approved'), s.screen());
  assert.equal(await s.ended(), 0, s.screen());
});

test('switch: the Enter that ends a "y" typed for a withdrawn prompt answers nothing, and says so', { timeout: 180_000 }, async () => {
  const s = onPty('switch');
  let at = await s.until('  approve? [y/N] ');
  s.type('y'); // the person starts answering ls…
  at = await s.until('y', at);
  await s.go(); // …which is withdrawn, and rm -rf asked in its place
  at = await s.until('asks to run: rm -rf ~/work\n', at);
  at = await s.until(`  approve? ${IGNORED}\n  approve? [y/N] `, at);
  s.type('\r'); // Enter, ending the "y" for ls
  at = await s.until(`\n  ${IGNORED}\n  approve? [y/N] `, at);
  assert.ok(!s.screen().includes('verdict rm'), s.screen());
  s.type('n\r');
  await s.until('verdict rm -rf ~/work: denied\n', at);
  assert.equal(await s.ended(), 0, s.screen());
});

test('tall: a command taller than the terminal is recalled (its start and size) right above the prompt, where the answer is typed', { timeout: 180_000 }, async () => {
  const s = onPty('tall');
  let at = await s.until('asks to run: rm -rf ~/work; \\\n');
  at = await s.until('    echo 98\n', at);
  at = await s.until('  you answer for: run: rm -rf ~/work; \\ … (100 lines · ', at);
  at = await s.until(' chars in all; scroll up to read it whole)\n  approve? [y/N] ', at);
  s.type('n\r');
  await s.until('verdict rm -rf ~/work; \\', at);
  assert.equal(await s.ended(), 0, s.screen());
});

test('suspend: stopped and continued while it waits (a job-control shell puts the terminal back in its own line mode meanwhile), the prompt takes the terminal back key by key, so the guard still holds', { timeout: 180_000 }, async () => {
  const s = onPty('suspend');
  const at = await s.until('  approve? [y/N] ');
  const [, pid, tty] = /pid (\d+) tty (\S+)\n/.exec(s.screen())!;
  const keyByKey = (): boolean => /(^|\s)-icanon(\s|$)/.test(execFileSync('stty', ['-F', tty!, '-a'], { encoding: 'utf8' }));
  assert.ok(keyByKey(), 'read key by key while the prompt waits');
  process.kill(Number(pid), 'SIGSTOP');
  // `script` stops itself when it sees its child stopped, in its own time: continued before that, it
  // would stop after and relay no key again. So wait until both are stopped (hang guard: 30 s).
  for (const deadline = Date.now() + 30_000; !(stopped(pid!) && stopped(String(s.scriptPid))); await delay(20)) {
    assert.ok(Date.now() < deadline, `not stopped after SIGSTOP: fixture ${stopped(pid!)}, script ${stopped(String(s.scriptPid))}`);
  }
  execFileSync('stty', ['-F', tty!, 'sane']); // the shell's own modes, as bash leaves them when it runs `fg`
  process.kill(Number(pid), 'SIGCONT');
  process.kill(s.scriptPid, 'SIGCONT');
  // In line mode a "y" typed before a prompt appeared would reach it whole with the Enter typed after.
  // A hang guard: not set back, the terminal stays in line mode for good; 30 s leaves a loaded machine time.
  for (const deadline = Date.now() + 30_000; !keyByKey(); await delay(20)) {
    assert.ok(Date.now() < deadline, `still in line mode after SIGCONT:\n${execFileSync('stty', ['-F', tty!, '-a'], { encoding: 'utf8' })}`);
  }
  s.type('y\r');
  await s.until('y\n  approved\nverdict rm -rf ~/work: approved\n', at);
  assert.equal(await s.ended(), 0, s.screen());
});

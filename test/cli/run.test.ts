/**
 * `chatty-gateway run` through the real bin, as a new user runs it: its own broker and root, the
 * bundled agents running the real `chatty-gateway worker`, approvals and questions answered on
 * piped stdin (`--approvals prompt` given, since piped stdin is not a TTY) and once on a real
 * pseudo-terminal (`script`), where `prompt` is the default.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { endsSoon, gitRepoOnMain, tempDir } from '../agents/helpers.js';
import { collect, exited, spawnCli, spawnCliOnPty, type CliResult } from '../helpers/cli.js';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function dir(prefix: string): string {
  const path = tempDir(prefix);
  temporary.push(path);
  return path;
}

/** A git repository on `main` with one commit. */
function repo(): string {
  return gitRepoOnMain(dir('chatty-run-repo-'));
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** `chatty-gateway run …` in `cwd` with `input` piped to its stdin (then closed). */
async function run(args: string[], cwd: string, input = ''): Promise<CliResult> {
  const child = spawnCli(['run', ...args], process.env, cwd);
  child.stdin.end(input);
  const [stdout, stderr, status] = await Promise.all([collect(child.stdout), collect(child.stderr), exited(child)]);
  return { code: status.code, stdout, stderr };
}

describe('run, approvals answered on piped stdin', () => {
  test('exec echo hi, y: asks on the terminal with who asks, prints hi, exits 0, leaves no worktree or branch', async () => {
    const cwd = repo();
    const result = await run(['local-coder', 'exec echo hi', '--approvals', 'prompt'], cwd, 'y\n');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'hi\n[exit code 0]\n');
    // The workspace and the choices (t: this root task) come between the request and the prompt.
    assert.match(result.stderr, /chatty-gateway: local-coder-0 \(root → local-coder\) asks to run: echo hi\n  workspace: [^\n]+\n  y: approve once · t: approve for this task · n: deny \(the default\)\n  approve\? \[y\/N\] y\n  approved\n/);
    assert.ok(result.stderr.includes('  local-coder-0 started\n'), result.stderr);
    assert.ok(result.stderr.includes('  [local-coder-0] running echo hi\n'), result.stderr);
    assert.equal(git(cwd, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
    assert.equal(git(cwd, 'branch', '--format=%(refname:short)'), 'main');
  });

  test('exec, n: the command does not run, the reason is said, exit non-zero', async () => {
    const cwd = repo();
    const marker = join(dir('chatty-run-marker-'), 'ran');
    const result = await run(['local-coder', `exec touch ${marker}`, '--approvals', 'prompt'], cwd, 'n\n');
    assert.notEqual(result.code, 0);
    assert.equal(result.code, 1);
    assert.equal(existsSync(marker), false);
    assert.equal(result.stdout, '');
    assert.ok(result.stderr.includes('  approve? [y/N] n\n  denied\n'), result.stderr);
    assert.ok(result.stderr.endsWith(`chatty-gateway: local-coder did not complete: exec denied: touch ${marker}\n`), result.stderr);
  });

  test('stdin ends before an answer: denied', async () => {
    const cwd = dir('chatty-run-plain-');
    const marker = join(cwd, 'ran');
    const result = await run(['local-coder', `exec touch ${marker}`, '--approvals', 'prompt'], cwd, '');
    assert.equal(result.code, 1);
    assert.equal(existsSync(marker), false);
    assert.ok(result.stderr.includes('(no answer: the input ended) denied'), result.stderr);
  });

  test('a question (from a callee, with options) answered by number after an empty line; a write approved; the prompt words joined', async () => {
    const cwd = dir('chatty-run-plain-');
    const script = 'invoke local-reviewer ask Which database? | Postgres | SQLite\nwrite notes.txt chosen';
    const result = await run(['local-coder', ...script.split(' '), '--approvals', 'prompt'], cwd, '\n2\ny\n');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'answer: SQLite\nwrote notes.txt (+1 -0)\n');
    assert.ok(result.stderr.includes('chatty-gateway: local-reviewer-0 (root → local-coder → local-reviewer) asks: Which database?\n  1) Postgres\n  2) SQLite\n'), result.stderr);
    assert.match(result.stderr, /chatty-gateway: local-coder-0 \(root → local-coder\) asks to write: notes\.txt\n  the worker says of it: \+1 -0\n  you answer for: write: notes\.txt\n  workspace: [^\n]+\n  path: [^\n]+\/notes\.txt\n[^\n]*\n  approve\? \[y\/N\] y\n/);
    // Not a git repository: the agents work in the directory itself.
    assert.equal(readFileSync(join(cwd, 'notes.txt'), 'utf8'), 'chosen\n');
  });
});

describe('run, the other modes', () => {
  test('piped stdin and no --approvals: deny, without reading stdin', async () => {
    const cwd = dir('chatty-run-plain-');
    const marker = join(cwd, 'ran');
    const result = await run(['local-coder', `exec touch ${marker}`], cwd, 'y\n');
    assert.equal(result.code, 1);
    assert.equal(existsSync(marker), false);
    assert.ok(result.stderr.includes(`chatty-gateway: denied (--approvals deny): local-coder-0 (root → local-coder) asks to run: touch ${marker}\n`), result.stderr);
  });

  test('--approvals allow: runs, saying so', async () => {
    const cwd = dir('chatty-run-plain-');
    const result = await run(['local-coder', 'exec pwd', '--approvals', 'allow'], cwd);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${cwd}\n[exit code 0]\n`);
    assert.ok(result.stderr.includes('chatty-gateway: approved (--approvals allow): local-coder-0 (root → local-coder) asks to run: pwd\n'), result.stderr);
  });

  test('a question with no one to ask (--approvals deny): the call fails quoting it', async () => {
    const cwd = dir('chatty-run-plain-');
    const result = await run(['local-coder', 'ask Ready?', '--approvals', 'deny'], cwd);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /chatty-gateway: local-coder did not complete: local-coder-0 asked "Ready\?"/);
    // The question's error reaches the worker before its task is cancelled, so it has nothing to withdraw.
    assert.doesNotMatch(result.stderr, /dropped|not in flight/);
  });

  test('--json: the agent.invoke result object, alone on stdout', async () => {
    const cwd = dir('chatty-run-plain-');
    const ok = await run(['local-coder', 'say', 'hi', 'there', '--json'], cwd);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), { success: true, response: 'hi there\n', messages: [], cancelled_by_user: false });
    assert.equal(ok.stdout.split('\n').length, 2);

    const failed = await run(['local-coder', 'say partial\nfail no', '--json'], cwd);
    assert.equal(failed.code, 1);
    assert.deepEqual(JSON.parse(failed.stdout), { success: false, response: 'partial\n', error: 'no', messages: [], cancelled_by_user: false });
  });

  test('mail posted to the root is shown as it comes', async () => {
    const cwd = dir('chatty-run-plain-');
    const result = await run(['local-coder', 'post root build is green'], cwd);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.stderr.includes('chatty-gateway: message from local-coder-0: build is green\n'), result.stderr);
  });

  test('an unknown agent: one line naming the agents there are, exit 1', async () => {
    const cwd = dir('chatty-run-plain-');
    const result = await run(['nobody', 'say hi'], cwd);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, 'chatty-gateway: unknown agent: nobody (the agents here: local-coder, local-reviewer)\n');
  });

  test('an --approvals mode that is not one: a usage error, exit 2', async () => {
    const result = await run(['local-coder', 'say hi', '--approvals', 'maybe'], dir('chatty-run-plain-'));
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^chatty-gateway: option '--approvals <mode>' argument 'maybe' is invalid\. Allowed choices are prompt, deny, allow\.\nusage: chatty-gateway run \[options\] <agent> <prompt\.\.\.>\n/);
  });
});

test('Ctrl-C (SIGINT) cancels the task: the tree is reaped, exit 130', async () => {
  const cwd = repo();
  const child = spawnCli(['run', 'local-coder', 'step waiting\nsleep 600000\nsay never'], process.env, cwd);
  child.stdin.end();
  let stderr = '';
  let interrupted = false;
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += String(chunk);
    if (!interrupted && stderr.includes('[local-coder-0] waiting\n')) {
      interrupted = true; // once: a second Ctrl-C quits at once
      child.kill('SIGINT');
    }
  });
  const [stdout, status] = await Promise.all([collect(child.stdout), exited(child)]);
  assert.equal(status.code, 130, stderr);
  assert.equal(stdout, '');
  assert.ok(stderr.includes('chatty-gateway: cancelling (Ctrl-C again to quit at once)\n'), stderr);
  assert.equal(git(cwd, 'branch', '--format=%(refname:short)'), 'main');
});

/** `run local-coder <script>` on a real pseudo-terminal, `answer` typed at the first approval; its exit code and the screen (new lines as `\n`). */
async function runOnPtyAnswering(script: string, answer: string): Promise<{ code: number | null; screen: string }> {
  const child = spawnCliOnPty(['run', 'local-coder', script], repo());
  let seen = '';
  let answered = false;
  child.stdout.on('data', (chunk: Buffer) => {
    seen += String(chunk);
    if (!answered && seen.includes('approve? [y/N] ')) {
      answered = true;
      child.stdin.write(`${answer}\n`);
    }
  });
  const status = await exited(child as never);
  child.stdin.end();
  return { code: status.code, screen: seen.replaceAll('\r\n', '\n') };
}

test('on a real pseudo-terminal prompt is the default: y runs the command, exit 0', async () => {
  const { code, screen } = await runOnPtyAnswering('exec echo hi', 'y');
  assert.equal(code, 0, screen);
  assert.match(screen, /local-coder-0 \(root → local-coder\) asks to run: echo hi\n  workspace: [^\n]+\n[^\n]+\n  approve\? \[y\/N\] y\n  approved\n/);
  assert.ok(screen.includes('\nhi\n[exit code 0]\n'), screen);
});

test('on a real pseudo-terminal n denies: the command does not run, exit non-zero', async () => {
  const marker = join(dir('chatty-run-marker-'), 'ran');
  const { code, screen } = await runOnPtyAnswering(`exec echo hi > ${marker}`, 'n');
  assert.equal(code, 1, screen);
  assert.ok(screen.includes(`local-coder-0 (root → local-coder) asks to run: echo hi > ${marker}\n`), screen);
  assert.ok(screen.includes('  !! DANGER: outside-workspace\n'), screen);
  assert.ok(screen.includes('  approve? [y/N] n\n  denied\n'), screen);
  assert.ok(screen.includes(`chatty-gateway: local-coder did not complete: exec denied: echo hi > ${marker}\n`), screen);
  assert.equal(existsSync(marker), false);
});

test('Ctrl-C on a real pseudo-terminal (the whole foreground group gets SIGINT): the task is cancelled, its command ended, exit 130', async () => {
  const cwd = repo();
  const pidFile = join(dir('chatty-run-pid-'), 'bg.pid');
  const script = `exec sleep 600 & echo $! > ${pidFile}; echo started; wait`;
  const child = spawnCliOnPty(['run', 'local-coder', script, '--approvals', 'allow'], cwd);
  let seen = '';
  let interrupted = false;
  child.stdout.on('data', (chunk: Buffer) => {
    seen += String(chunk);
    if (!interrupted && /\nstarted\r?\n/.test(seen)) {
      interrupted = true;
      child.stdin.write('\x03'); // the terminal's interrupt character
    }
  });
  const status = await exited(child as never);
  child.stdin.end();
  assert.equal(status.code, 130, seen);
  assert.ok(await endsSoon(Number(readFileSync(pidFile, 'utf8'))), 'the command started in the background was ended');
  assert.equal(git(cwd, 'branch', '--format=%(refname:short)'), 'main');
});

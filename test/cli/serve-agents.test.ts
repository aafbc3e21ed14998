/**
 * `chatty-gateway serve` with its agents and the terminal root, through the real bin: the ready
 * line's agents, `--agent NAME=COMMAND`, tasks typed on its prompt (piped stdin, driven by what
 * it prints), approvals per `--approvals`, an MCP client on the socket meanwhile, a stop with
 * a task running that leaves no worker behind, and a hostile worker whose words reach stderr only
 * made printable.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { APPROVALS_LOG_FILE, type AuditRow } from '../../main/broker/index.js';
import { shellWord } from '../../main/cli/shell-word.js';
import { endsSoon, gitRepoOnMain, tempDir } from '../agents/helpers.js';
import { collect, exited, firstLine, runCli, spawnCli, spawnCliOnPty, watchOutput } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, writeModuleDir } from '../helpers/wasm-fixtures.js';

const temporary: string[] = [];
const children: ReturnType<typeof spawnCli>[] = [];
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function dir(prefix: string): string {
  const path = tempDir(prefix);
  temporary.push(path);
  return path;
}

let modulesDir: string;
before(async () => {
  modulesDir = join(dir('chatty-serve-agents-modules-'), 'modules');
  writeModuleDir(modulesDir, 'echo', { component: await buildFixture('echo') });
});

/** A git repository on `main` with one commit. */
function repo(): string {
  return gitRepoOnMain(dir('chatty-serve-repo-'));
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** `chatty-gateway worker` (the scripted agent) as a shell command: an `--agent` of our own. */
const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));
const SCRIPTED_WORKER = [process.execPath, '--import', import.meta.resolve('tsx'), BIN, 'worker', '--participant-fd', '3'].map(shellWord).join(' ');

interface Ready {
  event: string;
  socket: string;
  token: string;
  agents: string[];
}

/** A running `serve --json` in `cwd`, its stderr watched: `shows(text)` waits until it has appeared (`times` times). */
async function serve(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const runtimeDir = join(dir('chatty-serve-run-'), 'run');
  const child = spawnCli(['serve', '--json', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir, ...args], env, cwd);
  children.push(child);
  const ended = exited(child);
  const stderr = watchOutput(child, child.stderr, ended);
  const ready = JSON.parse(await firstLine(child)) as Ready;
  const shows = (text: string, times = 1): Promise<void> => stderr.until(() => stderr.text().split(text).length - 1 >= times, `showing ${JSON.stringify(text)}; stderr`);
  return {
    child,
    ready,
    runtimeDir,
    shows,
    stderr: stderr.text,
    type: (line: string) => child.stdin.write(`${line}\n`),
    /** SIGTERM, then the exit status and the rest of stdout. */
    async stop(): Promise<{ code: number | null; stdout: string }> {
      child.kill('SIGTERM');
      const [stdout, status] = await Promise.all([collect(child.stdout), ended]);
      return { code: status.code, stdout };
    },
  };
}

/** The rows of `serve`'s approvals.log so far (written at once, one JSON line per decision). */
function auditRows(runtimeDir: string): AuditRow[] {
  return readFileSync(join(runtimeDir, APPROVALS_LOG_FILE), 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as AuditRow);
}

/** The worker processes `serve` (pid) has started: its children running `bin.ts worker`. */
function workers(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is no such process
  }
  return out
    .split('\n')
    .filter((line) => / worker --participant-fd 3/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('serve publishes agents', () => {
  test('the --json ready line names them: the bundled ones, then each --agent', async () => {
    const s = await serve(['--agent', `helper=${SCRIPTED_WORKER}`, '--agent', 'second.one=true'], dir('chatty-serve-plain-'));
    assert.deepEqual(Object.keys(s.ready), ['event', 'socket', 'token', 'agents']);
    assert.deepEqual(s.ready.agents, ['local-coder', 'local-reviewer', 'helper', 'second.one']);
    // The same names over the socket, for an A2A client.
    const token = readFileSync(s.ready.token, 'utf8');
    const res = await unixRequest(s.ready.socket, { path: '/', headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const stopped = await s.stop();
    assert.equal(stopped.code, 0, s.stderr());
    assert.equal(stopped.stdout, '');
  });

  test('--agent NAME=COMMAND is reachable from the prompt, several tasks at once; every worker is told where the gateway is and works in a worktree', async () => {
    const cwd = repo();
    const s = await serve(['--agent', `helper=${SCRIPTED_WORKER}`, '--approvals', 'allow'], cwd);
    s.type('helper exec echo "socket=$CHATTY_GATEWAY_SOCKET"');
    s.type('local-coder exec pwd');
    await s.shows('(helper) completed\n');
    await s.shows('(local-coder) completed\n');
    const out = s.stderr();
    assert.ok(out.includes('chatty-gateway: task #1: helper: exec echo "socket=$CHATTY_GATEWAY_SOCKET"\n'), out);
    assert.ok(out.includes(`  #1 | socket=${s.ready.socket}\n`), out);
    assert.ok(out.includes('chatty-gateway: approved (--approvals allow): helper-0 (root → helper) asks to run: echo "socket=$CHATTY_GATEWAY_SOCKET"\n'), out);
    assert.ok(out.includes('  #1 helper-0 started\n'), out);
    assert.ok(out.includes('chatty-gateway: task #1 (helper) completed\n'), out);
    assert.ok(out.includes(`  #2 | ${join(cwd, '.git', 'chatty-worktrees')}/local-coder-`), out);
    assert.ok(out.includes('chatty-gateway: task #2 (local-coder) completed\n'), out);
    assert.equal((await s.stop()).code, 0);
    assert.equal(git(cwd, 'branch', '--format=%(refname:short)'), 'main');
    // No one decided: approvals.log names the mode, not a person.
    assert.deepEqual(auditRows(s.runtimeDir).map((row) => [row.command_or_path, row.verdict, row.by]).sort(), [
      ['echo "socket=$CHATTY_GATEWAY_SOCKET"', 'approved', 'mode:allow'],
      ['pwd', 'approved', 'mode:allow'],
    ]);
  });
});

describe('serve --agent with a relative path, in a git repository', () => {
  test('the README\'s `--agent helper="node helper.js"` runs an uncommitted helper.js (examples/agents/helper.js) beside serve, its workspace still a worktree', async () => {
    const cwd = repo();
    // A user's project as `npm init -y` makes it (`"type": "commonjs"`, npm ≥ 11) with the example
    // agent copied in, nothing committed: the copy must run there, not only in an ES-module project.
    writeFileSync(join(cwd, 'package.json'), '{ "type": "commonjs" }\n');
    copyFileSync(fileURLToPath(new URL('../../examples/agents/helper.js', import.meta.url)), join(cwd, 'helper.js'));
    // `chatty-protocol-gateway/worker` as an installed package would give it, here the sources
    // (through tsx); not committed either, so only the copy beside serve resolves it.
    const pkg = join(cwd, 'node_modules', 'chatty-protocol-gateway');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'chatty-protocol-gateway', type: 'module', exports: { './worker': './worker.ts' } }));
    writeFileSync(join(pkg, 'worker.ts'), `export * from ${JSON.stringify(fileURLToPath(new URL('../../main/worker/index.ts', import.meta.url)))};\n`);
    const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --import ${import.meta.resolve('tsx')}`.trim();
    const s = await serve(['--agent', 'helper=node helper.js', '--approvals', 'allow'], cwd, { ...process.env, NODE_OPTIONS: nodeOptions });
    s.type('helper notes.txt remember the milk');
    await s.shows('chatty-gateway: task #1 (helper) ');
    const out = s.stderr();
    assert.ok(out.includes('chatty-gateway: task #1 (helper) completed\n'), out);
    assert.ok(out.includes('chatty-gateway: approved (--approvals allow): helper-0 (root → helper) asks to write: notes.txt\n'), out);
    assert.match(out, new RegExp(`  #1 \\| wrote notes\\.txt in ${join(cwd, '.git', 'chatty-worktrees')}/helper-0\n`));
    assert.ok(out.includes('  #1 | the other agents here: local-coder, local-reviewer\n'), out);
    assert.equal((await s.stop()).code, 0);
    assert.equal(git(cwd, 'status', '--porcelain'), '?? helper.js\n?? node_modules/\n?? package.json');
  });
});

describe('serve --no-bundled-agents', () => {
  test('with a remote module forwarded, the aggregated A2A card lists it (200); with the bundled agents (roles) it is refused (403)', async () => {
    const remoteModules = join(dir('chatty-serve-remote-'), 'modules');
    writeModuleDir(remoteModules, 'planner', { manifest: '[module]\nname = "planner"\nversion = "1.0.0"\ndescription = "plans the work"\nexecution_mode = "remote"\n' });
    const card = async (args: string[]) => {
      // The later --modules-dir is the one taken.
      const s = await serve(['--modules-dir', remoteModules, '--remote-runner', 'http://127.0.0.1:9', ...args], dir('chatty-serve-plain-'));
      const token = readFileSync(s.ready.token, 'utf8');
      const res = await unixRequest(s.ready.socket, { path: '/.well-known/agent.json', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await s.stop()).code, 0, s.stderr());
      return { ready: s.ready, res };
    };

    const without = await card(['--no-bundled-agents']);
    assert.deepEqual(without.ready.agents, []);
    assert.equal(without.res.status, 200, without.res.body);
    const body = JSON.parse(without.res.body) as { gateway: boolean; agents: { name: string }[] };
    assert.equal(body.gateway, true);
    assert.deepEqual(body.agents.map((a) => a.name), ['planner']);

    const bundled = await card([]);
    assert.deepEqual(bundled.ready.agents, ['local-coder', 'local-reviewer']);
    assert.equal(bundled.res.status, 403, bundled.res.body);
  });
});

describe('serve --approvals prompt, piped stdin', () => {
  test('local-coder exec echo hi: y prints hi; n does not run it; an MCP client uses the socket meanwhile', async () => {
    const cwd = repo();
    const s = await serve(['--approvals', 'prompt'], cwd);
    const token = readFileSync(s.ready.token, 'utf8');

    s.type('local-coder exec echo hi');
    await s.shows('approve? [y/N] ');
    assert.match(s.stderr(), /chatty-gateway: local-coder-0 \(root → local-coder\) asks to run: echo hi\n  workspace: [^\n]+\n[^\n]+\n  approve\? \[y\/N\] /);
    // While the task waits for the human, a tools/call through the socket is served.
    const call = await unixRequest(s.ready.socket, {
      method: 'POST',
      path: '/mcp/echo',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { during: 'the task' } } }),
    });
    assert.equal(call.status, 200, call.body);
    assert.deepEqual((JSON.parse(call.body) as { result: unknown }).result, { content: [{ type: 'text', text: '{"during":"the task"}' }] });
    s.type('y');
    await s.shows('chatty-gateway: task #1 (local-coder) completed\n');
    assert.ok(s.stderr().includes('  approve? [y/N] y\n  approved\n'), s.stderr());
    assert.ok(s.stderr().includes('  #1 [local-coder-0] running echo hi\n'), s.stderr());
    assert.ok(s.stderr().includes('  #1 | hi\n  #1 | [exit code 0]\n'), s.stderr());

    const marker = join(dir('chatty-serve-marker-'), 'ran');
    s.type(`local-coder exec touch ${marker}`);
    await s.shows('approve? [y/N] ', 2);
    s.type('n');
    await s.shows(`chatty-gateway: task #2 (local-coder) did not complete: exec denied: touch ${marker}\n`);
    assert.equal(existsSync(marker), false);

    const stopped = await s.stop();
    assert.equal(stopped.code, 0, s.stderr());
    assert.equal(stopped.stdout, '');
    assert.ok(!existsSync(s.ready.socket));
  });

  test("two tasks at once: the other task's lines never land inside the question waiting for its answer", async () => {
    const s = await serve(['--approvals', 'prompt'], dir('chatty-serve-plain-'));
    // Task #2's text most likely comes while task #1's approval waits (the assertions hold either way).
    s.child.stdin.write('local-coder exec echo one\nlocal-reviewer step two\\nsleep 1500\\nsay two\n');
    await s.shows('approve? [y/N] ');
    await s.shows('chatty-gateway: task #2 (local-reviewer) completed\n');
    s.type('y');
    await s.shows('chatty-gateway: task #1 (local-coder) completed\n');
    const lines = s.stderr().split('\n');
    for (const line of lines.filter((l) => l.includes('approve?'))) assert.ok(line === '  approve? [y/N] ' || line === '  approve? [y/N] y', `a line mixed into the question: ${JSON.stringify(line)}`);
    assert.equal(lines.filter((l) => l === '  approve? [y/N] y').length, 1);
    for (const line of ['  #2 [local-reviewer-0] two', '  #2 | two', '  #1 | one']) assert.ok(lines.includes(line), s.stderr());
    assert.equal((await s.stop()).code, 0);
  });

  test('a question from a callee is asked with its chain and answered by number', async () => {
    const s = await serve(['--approvals', 'prompt'], dir('chatty-serve-plain-'));
    s.type('local-coder invoke local-reviewer ask Which database? | Postgres | SQLite');
    await s.shows('answer (a number, or your own words): ');
    assert.ok(s.stderr().includes('chatty-gateway: local-reviewer-0 (root → local-coder → local-reviewer) asks: Which database?\n  1) Postgres\n  2) SQLite\n'), s.stderr());
    s.type('2');
    await s.shows('chatty-gateway: task #1 (local-coder) completed\n');
    assert.ok(s.stderr().includes('  #1 | answer: SQLite\n'), s.stderr());
    assert.equal((await s.stop()).code, 0);
  });
});

describe('task text: one rule for `\\n` at serve\'s prompt and in `run`', () => {
  test('`say a\\nsay b` is two lines and `say a\\\\nb` one with a backslash and n, the same at the prompt as in `run`', async () => {
    const cwd = dir('chatty-serve-plain-');
    const s = await serve(['--approvals', 'deny'], cwd);
    s.type('local-coder say a\\nsay b');
    await s.shows('chatty-gateway: task #1 (local-coder) completed\n');
    s.type('local-coder say a\\\\nb');
    await s.shows('chatty-gateway: task #2 (local-coder) completed\n');
    assert.equal((await s.stop()).code, 0);
    const out = s.stderr();
    assert.ok(out.includes('chatty-gateway: task #1: local-coder: say a\\nsay b\n'), out);
    assert.ok(out.includes('  #1 | a\n  #1 | b\n'), out);
    assert.ok(out.includes('chatty-gateway: task #2: local-coder: say a\\\\nb\n'), out);
    assert.ok(out.includes('  #2 | a\\nb\n'), out);

    const twoLines = await runCli(['run', 'local-coder', 'say a\\nsay b'], { cwd });
    assert.equal(twoLines.code, 0, twoLines.stderr);
    assert.equal(twoLines.stdout, 'a\nb\n');
    const oneLine = await runCli(['run', 'local-coder', 'say a\\\\nb'], { cwd });
    assert.equal(oneLine.code, 0, oneLine.stderr);
    assert.equal(oneLine.stdout, 'a\\nb\n');
  });
});

describe('serve --approvals deny', () => {
  test('denies without asking; a question fails the call quoting it; an unknown agent names the agents there are; a lone word is a hint', async () => {
    const cwd = dir('chatty-serve-plain-');
    const marker = join(cwd, 'ran');
    const s = await serve(['--approvals', 'deny'], cwd);
    s.type(`local-coder exec touch ${marker}`);
    await s.shows('chatty-gateway: task #1 (local-coder) did not complete: ');
    assert.ok(s.stderr().includes(`chatty-gateway: denied (--approvals deny): local-coder-0 (root → local-coder) asks to run: touch ${marker}\n`), s.stderr());
    assert.ok(!s.stderr().includes('approve?'), s.stderr());
    assert.equal(existsSync(marker), false);
    assert.deepEqual(auditRows(s.runtimeDir).map((row) => [row.command_or_path, row.verdict, row.by]), [[`touch ${marker}`, 'denied', 'mode:deny']]);

    s.type('local-coder ask Ready?');
    await s.shows('chatty-gateway: task #2 (local-coder) did not complete: ');
    assert.match(s.stderr(), /task #2 \(local-coder\) did not complete: local-coder-\d asked "Ready\?"/);

    s.type('nobody say hi');
    await s.shows('chatty-gateway: task #3: unknown agent: nobody (the agents here: local-coder, local-reviewer)\n');
    s.type('local-coder');
    await s.shows('chatty-gateway: type <agent> <task text>, e.g. local-coder exec echo hi (the agents: local-coder, local-reviewer)\n');
    assert.equal((await s.stop()).code, 0);
  });

  test('without --approvals and with piped stdin, stdin is not read (a harness that writes to it starts nothing)', async () => {
    const s = await serve([], dir('chatty-serve-plain-'));
    s.type('local-coder say hi');
    const stopped = await s.stop();
    assert.equal(stopped.code, 0);
    assert.ok(!s.stderr().includes('task #1'), s.stderr());
  });
});

test('a stop (SIGTERM) with a task running cancels it and reaps its worker before the socket and token go', async () => {
  const cwd = repo();
  const s = await serve(['--approvals', 'deny'], cwd);
  s.type('local-coder step waiting\\nsleep 60000\\nsay never');
  await s.shows('  #1 [local-coder-0] waiting\n');
  const pids = workers(s.child.pid!);
  assert.equal(pids.length, 1, s.stderr());
  const stopped = await s.stop();
  assert.equal(stopped.code, 0, s.stderr());
  assert.ok(await endsSoon(pids[0]!), 'the worker was reaped');
  assert.ok(!existsSync(s.ready.socket));
  assert.ok(!existsSync(s.ready.token));
  assert.ok(!s.stderr().includes('#1 | never'), s.stderr());
  assert.equal(git(cwd, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
  assert.equal(git(cwd, 'branch', '--format=%(refname:short)'), 'main');
});

test('on a real pseudo-terminal: prompt is the default, `> ` asks for a task, y runs it, Ctrl-C stops the gateway', async () => {
  const cwd = repo();
  const runtimeDir = join(dir('chatty-serve-run-'), 'run');
  const child = spawnCliOnPty(['serve', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir], cwd);
  let seen = '';
  const steps: [string, string][] = [
    ['approvals: prompt (asked here)', ''],
    ['\n> ', 'local-coder exec echo hi\n'],
    ['approve? [y/N] ', 'y\n'],
    ['task #1 (local-coder) completed\r\n> ', '\x03'], // the terminal's interrupt character
  ];
  child.stdout.on('data', (chunk: Buffer) => {
    seen += String(chunk);
    while (steps.length > 0 && seen.includes(steps[0]![0])) {
      const [, answer] = steps.shift()!;
      if (answer !== '') child.stdin.write(answer);
    }
  });
  const status = await exited(child as never);
  child.stdin.end();
  // The screen as it reads: a line erased (`\r` then erase-line) to be written over is gone.
  const screen = seen.replaceAll('\r\n', '\n').replace(/[^\n]*\r\x1b\[K/g, '');
  assert.equal(status.code, 0, screen);
  assert.match(screen, /chatty-gateway: local-coder-0 \(root → local-coder\) asks to run: echo hi\n  workspace: [^\n]+\n[^\n]+\n  approve\? \[y\/N\] y\n  approved\n/);
  assert.ok(screen.includes('  #1 | hi\n  #1 | [exit code 0]\n'), screen);
  assert.ok(seen.includes('chatty-gateway: task #1 (local-coder) completed\r\n> '), 'the prompt is back once the task has ended');
  assert.ok(screen.includes('chatty-gateway: stopped (SIGINT)\n'), screen);
  assert.ok(!existsSync(join(runtimeDir, 'gateway.sock')));
});

/** The rows a terminal shows for `output` (no wrapping): `\r`, new lines and erase-to-end-of-line (`ESC[K`) applied, other escapes ignored. */
function terminalRows(output: string): string[] {
  const rows = [''];
  let col = 0;
  for (let i = 0; i < output.length; i++) {
    const c = output[i]!;
    const last = rows.length - 1;
    if (c === '\r') col = 0;
    else if (c === '\n') {
      rows.push('');
      col = 0;
    } else if (c === '\x1b') {
      const escape = /^\x1b\[[0-9;?]*([@-~])/.exec(output.slice(i));
      if (escape) {
        if (escape[1] === 'K') rows[last] = rows[last]!.slice(0, col);
        i += escape[0].length - 1;
      }
    } else {
      const row = rows[last]!;
      rows[last] = row.slice(0, col).padEnd(col) + c + row.slice(col + 1);
      col++;
    }
  }
  return rows;
}

test('on a real pseudo-terminal: a live status row shows the delegation chain and the current step; the text streams, a partial line shown at once', { timeout: 180_000 }, async () => {
  const cwd = repo();
  const fifos = dir('chatty-serve-fifo-');
  const [first, second] = [join(fifos, 'a'), join(fifos, 'b')];
  execFileSync('mkfifo', [first, second]);
  const runtimeDir = join(dir('chatty-serve-run-'), 'run');
  const child = spawnCliOnPty(['serve', '--runtime-dir', runtimeDir, '--modules-dir', modulesDir, '--approvals', 'allow'], cwd);
  const ended = exited(child as never);
  child.stdout.setEncoding('utf8');
  const out = watchOutput(child, child.stdout, ended);
  const bottom = (): string => terminalRows(out.text()).at(-1)!;
  const until = (what: string, check: () => boolean): Promise<void> => out.until(check, what, () => terminalRows(out.text()).join('\n'));

  await until('the prompt', () => bottom() === '> ');
  // local-coder asks local-reviewer to run a command that waits for the first FIFO, then runs one that
  // prints half a line, waits for the second FIFO and ends the line.
  child.stdin.write(`local-coder invoke local-reviewer exec read x < ${first}\\nexec printf half; read y < ${second}; echo " rest"\n`);
  await until('the callee’s step on the status row', () => bottom().startsWith('[#1 local-coder-0 → local-reviewer-0 ▸ running read x < '));
  assert.ok(bottom().endsWith('] > '), bottom());
  assert.ok(!out.text().includes('[local-coder-0]'), 'no step printed as a line on a terminal');

  await writeFile(first, 'go\n');
  await until('the partial line', () => bottom() === '  #1 | half');
  assert.ok(!out.text().includes('task #1 (local-coder) completed'), 'the text is seen while the task runs');
  await writeFile(second, 'go\n');
  await until('the end of the task', () => out.text().includes('task #1 (local-coder) completed'));
  await until('the prompt', () => bottom() === '> ');
  const rows = terminalRows(out.text());
  assert.ok(rows.includes('  #1 | half rest'), rows.join('\n'));
  assert.ok(rows.includes('  #1 local-coder-0 started'), rows.join('\n'));
  assert.ok(!rows.some((row) => row.startsWith('[#1')), `no status row left on the screen:\n${rows.join('\n')}`);

  child.stdin.write('\x03');
  const status = await ended;
  child.stdin.end();
  assert.equal(status.code, 0, terminalRows(out.text()).join('\n'));
});

/** A worker that puts escape sequences and control characters into every channel the terminal shows (test/cli/fixtures/hostile-worker.ts). */
const HOSTILE = [process.execPath, '--import', import.meta.resolve('tsx'), fileURLToPath(new URL('./fixtures/hostile-worker.ts', import.meta.url))].map(shellWord).join(' ');
/** A worker that dies before its hello, its stderr (quoted in the failure) setting the title. */
const CRASHING = `printf 'boom\\033]2;STDERR-TITLE\\007\\033[2K\\n' >&2; exit 3`;
/** Every character that would make a terminal do something rather than show it (new lines aside). */
const UNSAFE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

test('a hostile worker cannot rewrite the approval prompt or reach the terminal through any line; a broker line while the approval waits is a line of its own', { timeout: 180_000 }, async () => {
  const fifo = join(dir('chatty-serve-fifo-'), 'go');
  execFileSync('mkfifo', [fifo]);
  const s = await serve(['--no-bundled-agents', '--approvals', 'prompt', '--agent', `hostile=${HOSTILE}`, '--agent', `crashing=${CRASHING}`], dir('chatty-serve-plain-'));
  s.type(`hostile approve ${fifo}`);
  await s.shows('approve? [y/N] ');
  // The approval waits: the worker now sends an event the broker logs.
  await writeFile(fifo, 'go\n');
  await s.shows('chatty-gateway: broker: ');
  await s.shows('approve? [y/N] ', 2); // shown again below the broker's line
  const steps: [string, string][] = [
    ['n', 'task #1 (hostile) completed\n'],
    ['hostile text', 'task #2 (hostile) completed\n'],
    ['hostile ask', 'answer (a number, or your own words): '],
    ['1', 'task #3 (hostile) completed\n'],
    ['hostile fail', 'task #4 (hostile) did not complete: '],
    ['crashing go', 'boom'],
  ];
  for (const [line, then] of steps) {
    s.type(line);
    await s.shows(then);
  }
  assert.equal((await s.stop()).code, 0, s.stderr());

  const stderr = s.stderr();
  const lines = stderr.split('\n');
  const bad = lines.find((line) => UNSAFE.test(line));
  assert.equal(bad, undefined, `a line the terminal would obey: ${JSON.stringify(bad)}\n${stderr}`);
  assert.ok(
    // Through the display rule (issue 18): each hidden character as its code point, and a warning.
    stderr.includes('chatty-gateway: hostile-0 (root → hostile) asks to run: ls<U+001B>[2K<U+000D>  approved: harmless<U+001B>]2;APPROVAL-TITLE<U+0007> && rm -rf /tmp/nothing\n') &&
      stderr.includes('  !! HIDDEN CHARACTERS: shown as <U+XXXX>; what runs holds characters you could not see\n  approve? [y/N] '),
    stderr,
  );
  // The broker's line never lands inside the question: each row with the question is the question alone (or with its answer).
  for (const line of lines.filter((l) => l.includes('approve?'))) assert.ok(line === '  approve? [y/N] ' || line === '  approve? [y/N] n', `a line mixed into the question: ${JSON.stringify(line)}`);
  assert.ok(stderr.includes('  #1 | verdict denied\n'), stderr);
  assert.ok(stderr.includes('  #2 [hostile-1] step2J\n'), stderr);
  assert.ok(stderr.includes('  #2 | plain  after A2;C1-TITLEB\n'), stderr);
  assert.ok(stderr.includes('asks: Q<U+001B>]2;ASK-TITLE<U+0007>?\n  1) a<U+001B>[31mred\n'), stderr);
  assert.ok(stderr.includes('did not complete: reasonRED\n'), stderr);
});

describe('serve --agent usage errors exit 2 with the usage line', () => {
  for (const [what, args, error] of [
    ['no =', ['--agent', 'helper'], /give it as NAME=COMMAND/],
    ['a name that is not one', ['--agent', 'bad name=true'], /'bad name' is not an agent name/],
    ['root', ['--agent', 'root=true'], /'root' is not an agent name/],
    ['no command', ['--agent', 'helper=  '], /the agent 'helper' has no command/],
    ['a duplicate', ['--agent', 'helper=true', '--agent', 'helper=false'], /an agent named 'helper' is already published/],
    ['a bundled name', ['--agent', 'local-coder=true'], /an agent named 'local-coder' is already published/],
    ['an --approvals mode that is not one', ['--approvals', 'maybe'], /argument 'maybe' is invalid\. Allowed choices are prompt, deny, allow\./],
  ] as const) {
    test(what, async () => {
      const result = await runCli(['serve', ...args], { cwd: dir('chatty-serve-plain-') });
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '');
      const [first, second] = result.stderr.split('\n');
      assert.match(first!, /^chatty-gateway: option '--(agent <name=command>|approvals <mode>)' argument /);
      assert.match(first!, error);
      assert.equal(second, 'usage: chatty-gateway serve [options]');
    });
  }
});

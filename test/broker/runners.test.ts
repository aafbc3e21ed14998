/**
 * Runners and workspaces with real child processes (children/where-worker.ts, built on
 * main/worker) and real git repositories made in the system's temporary folder.
 */
import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  GitWorktreeFactory,
  LocalRunner,
  workerEnv,
  worktreeName,
  type LocalRunnerOptions,
  type RunnerStart,
  type StartedWorker,
  type Workspace,
  type WorkspaceFactory,
} from '../../main/broker/runners/index.js';
import { Directory, HELLO_TIMEOUT_MS, ParticipantRegistry, type SpawnContext } from '../../main/fabric/index.js';
import type { Report } from './children/where-worker.js';

const WORKER = fileURLToPath(new URL('./children/where-worker.ts', import.meta.url));
/** tsx by its full address: a worker runs in its worktree, where a bare `tsx` would not resolve. */
const TSX = import.meta.resolve('tsx');
const GIT_ID = ['-c', 'user.name=runner test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false'];

const children: ChildProcess[] = [];
const temporary: string[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-runners-')));
  temporary.push(dir);
  return dir;
}

/** git in `cwd` as a test's own tool: no inherited GIT_DIR, an identity of its own. */
function g(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...GIT_ID, ...args], { cwd, encoding: 'utf8', env: workerEnv(process.env) }).trim();
}

/** A repository on `main` with one commit (README), and a branch `dev` one commit further (dev.txt). */
function makeRepo(): string {
  const repo = join(tempDir(), 'repo');
  mkdirSync(repo);
  g(repo, 'init', '-q');
  g(repo, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  writeFileSync(join(repo, 'README'), 'a repository for the runner tests\n');
  mkdirSync(join(repo, 'sub'));
  writeFileSync(join(repo, 'sub', 'inner.txt'), 'inside\n');
  g(repo, 'add', '.');
  g(repo, 'commit', '-q', '-m', 'init');
  g(repo, 'checkout', '-q', '-b', 'dev'); // in this temporary repository, not the project's
  writeFileSync(join(repo, 'dev.txt'), 'on dev\n');
  g(repo, 'add', 'dev.txt');
  g(repo, 'commit', '-q', '-m', 'dev work');
  g(repo, 'checkout', '-q', 'main');
  return repo;
}

const branches = (repo: string) => g(repo, 'branch', '--format=%(refname:short)').split('\n').sort();
const worktrees = (repo: string) =>
  g(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));

function newFabric() {
  return { directory: new Directory(), registry: new ParticipantRegistry() };
}

function runner(mode: string, options: Partial<LocalRunnerOptions> & { marker?: string } = {}): LocalRunner {
  const { marker, ...rest } = options;
  return new LocalRunner({ command: process.execPath, args: ['--import', TSX, WORKER, mode, ...(marker ? [marker] : [])], ...rest });
}

interface StartOptions extends Partial<Omit<RunnerStart, 'connection'>> {
  fabric?: ReturnType<typeof newFabric>;
  helloTimeoutMs?: number;
  /** Sees each child spawned for this start. */
  spawned?: ChildProcess[];
  onSpawn?: (child: ChildProcess) => void;
}

function start(r: LocalRunner, spec: string, spawnContext: Partial<SpawnContext>, options: StartOptions = {}): Promise<StartedWorker> {
  const { fabric = newFabric(), helloTimeoutMs, spawned, onSpawn, ...rest } = options;
  return r.start({
    spec,
    spawnContext: { roster: [], ...spawnContext },
    connection: {
      ...fabric,
      ...(helloTimeoutMs === undefined ? {} : { helloTimeoutMs }),
      onSpawn: (child) => {
        children.push(child);
        spawned?.push(child);
        child.stdout!.resume();
        onSpawn?.(child);
      },
    },
    ...rest,
  });
}

/** Runs the worker's one task (with the context its runner says) and returns what it reported. */
async function report(worker: StartedWorker): Promise<Report> {
  const texts: string[] = [];
  const task = await worker.connection.runTask({ taskId: 'where', text: 'where are you?', spawnContext: worker.spawnContext }, (event) => {
    if (event.kind === 'artifact') texts.push(event.text);
  });
  const outcome = await task.outcome;
  assert.equal(outcome.state, 'completed', outcome.message);
  return JSON.parse(texts.join('')) as Report;
}

function assertGone(pid: number | undefined): void {
  assert.ok(pid !== undefined);
  assert.throws(() => process.kill(pid, 0), (err: NodeJS.ErrnoException) => err.code === 'ESRCH');
}

/** Resolves once the child has exited and its stdio has closed (all its stderr read). */
function closed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    if (child.stderr === null || child.stderr.readableEnded || child.stderr.destroyed) return Promise.resolve();
  }
  return once(child, 'close').then(() => {});
}

describe('LocalRunner', () => {
  it('without a factory, admits a node, runs its worker in the broker\'s directory with the context unchanged, and stop() reaps it', async () => {
    const order: string[] = [];
    const context: SpawnContext = { workspace_root: '/nowhere/in/particular', base_branch: 'trunk', roster: ['helper'], verification: 'npm test' };
    const worker = await start(runner('report'), 'solo', context, {
      onAdmitted: (node) => order.push(`admitted ${node.name}`),
      onSpawn: () => order.push('spawned'),
    });
    assert.deepEqual(order, ['admitted solo-0', 'spawned']);
    assert.equal(worker.node.name, 'solo-0');
    assert.deepEqual(worker.spawnContext, context);
    const seen = await report(worker);
    assert.equal(seen.cwd, realpathSync(process.cwd()));
    assert.deepEqual(seen.spawnContext, context);
    assert.equal(seen.env.PWD, process.env.PWD ?? null); // no workspace: the spawn context of the broker is unchanged
    const pid = worker.child.pid;
    await worker.stop(1000);
    assertGone(pid);
    assert.equal(worker.connection.isOpen, false);
    await worker.stop(1000); // idempotent
  });

  it('passes a given env as given', async () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, RUNNER_TEST: 'given' };
    const worker = await start(runner('report', { env }), 'solo', {});
    const seen = await report(worker);
    assert.equal(seen.env.RUNNER_TEST, 'given');
    assert.equal(seen.env.PWD, null);
    await worker.stop(1000);
  });

  it('a worker that never says hello (30 s by default) fails start with the tail of its stderr, and its workspace is released', async () => {
    const repo = makeRepo();
    const spawned: ChildProcess[] = [];
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const error = await start(runner('mute', { workspaceFactory: new GitWorktreeFactory() }), 'mute', { workspace_root: repo, base_branch: 'main' }, {
        spawned,
        onSpawn: (child) => {
          // Once it has said what it had to say on stderr, its 30 s are up.
          let said = '';
          child.stderr!.on('data', (chunk: Buffer) => {
            said += chunk.toString();
            if (said.includes('fatal: no model configured\n')) mock.timers.tick(HELLO_TIMEOUT_MS);
          });
        },
      }).then(
        () => assert.fail('start should fail'),
        (err: Error) => err,
      );
      assert.match(error.message, /^fabric: worker mute-0 \(.*\) did not complete its hello: no session\.hello within 30 s\n/);
      assert.match(error.message, /--- the end of its stderr ---\n[^\n]*\n(where-worker: starting\n)+where-worker: fatal: no model configured$/);
      assert.ok(error.message.length < 9 * 1024, 'only the tail of its stderr');
    } finally {
      mock.timers.reset();
    }
    assert.equal(spawned.length, 1);
    assertGone(spawned[0]!.pid);
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(branches(repo), ['dev', 'main']);
  });

  it('a worker that hangs up without a hello and ignores SIGTERM is SIGKILLed after the reap grace; start fails with its stderr', async () => {
    const spawned: ChildProcess[] = [];
    const error = await start(runner('hangup-stubborn', { reapGraceMs: 200 }), 'mute', {}, { spawned }).then(
      () => assert.fail('start should fail'),
      (err: Error) => err,
    );
    assert.match(error.message, /did not complete its hello: the worker closed the connection/);
    assert.match(error.message, /where-worker: fatal: no model configured\nwhere-worker: SIGTERM ignored$/);
    assert.equal(spawned[0]!.signalCode, 'SIGKILL');
    assertGone(spawned[0]!.pid);
  });

  it('stop() sends SIGTERM, then SIGKILL after the grace to a worker that ignores SIGTERM; then releases its worktree', async () => {
    const repo = makeRepo();
    const worker = await start(runner('stubborn', { workspaceFactory: new GitWorktreeFactory() }), 'stubborn', { workspace_root: repo, base_branch: 'main' });
    assert.equal(worktrees(repo).length, 2);
    const allClosed = closed(worker.child);
    const pid = worker.child.pid;
    const first = worker.stop(300);
    assert.equal(worker.stop(300), first, 'a second stop while the first runs is the same stop');
    await first;
    assert.equal(worker.child.signalCode, 'SIGKILL');
    assertGone(pid);
    await allClosed;
    assert.match(worker.stderrTail(), /where-worker: SIGTERM ignored/);
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(branches(repo), ['dev', 'main']);
    assert.equal(worker.connection.isOpen, false);
    await worker.stop(300);
  });

  it('a failing factory fails start naming its message, and no child is ever spawned', async () => {
    const marker = join(tempDir(), 'ran');
    const throwing: WorkspaceFactory = {
      create: () => {
        throw new Error('disk full');
      },
    };
    const rejecting: WorkspaceFactory = { create: async () => Promise.reject(new Error('no quota left')) };
    const git = new GitWorktreeFactory();
    const repo = makeRepo();
    const notARepo = tempDir();
    const cases: [WorkspaceFactory, Partial<SpawnContext>, RegExp][] = [
      [throwing, {}, /^runner: no workspace for solo-0, so its worker was not started: disk full$/],
      [rejecting, {}, /no workspace for solo-0.*: no quota left$/],
      [git, { base_branch: 'main' }, /a worktree for solo-0 needs the spawn context's workspace_root/],
      [git, { workspace_root: repo }, /a worktree for solo-0 needs the spawn context's base_branch/],
      [git, { workspace_root: notARepo, base_branch: 'main' }, /is not inside a git work tree/],
      [git, { workspace_root: join(notARepo, 'missing'), base_branch: 'main' }, /workspace_root .*missing cannot be used/],
      [git, { workspace_root: repo, base_branch: 'no-such-branch' }, /base_branch "no-such-branch" names no commit in/],
      [git, { workspace_root: repo, base_branch: '--output=/tmp/x' }, /is not a branch name/],
    ];
    for (const [factory, context, expected] of cases) {
      const fabric = newFabric();
      const spawned: ChildProcess[] = [];
      const error = await start(runner('report', { marker, workspaceFactory: factory }), 'solo', context, { fabric, spawned }).then(
        () => assert.fail('start should fail'),
        (err: Error) => err,
      );
      assert.match(error.message, expected);
      assert.equal(spawned.length, 0, 'no child spawned');
      assert.equal(existsSync(marker), false, 'the worker never ran');
      assert.equal(fabric.registry.list().length, 0);
      assert.equal(fabric.directory.admit('solo').name, 'solo-1', 'the node was admitted (its name is spent)');
    }
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(branches(repo), ['dev', 'main']);
    // The same runner with a factory that works does run the worker: the marker would have shown it.
    const worker = await start(runner('report', { marker, workspaceFactory: git }), 'solo', { workspace_root: repo, base_branch: 'main' });
    assert.equal(existsSync(marker), true);
    await worker.stop(1000);
  });

  it('an abort while the worker is starting ends its child, releases its workspace and rejects with the reason', async () => {
    const repo = makeRepo();
    const controller = new AbortController();
    const spawned: ChildProcess[] = [];
    const error = await start(runner('mute-stubborn', { workspaceFactory: new GitWorktreeFactory(), reapGraceMs: 200 }), 'late', { workspace_root: repo, base_branch: 'main' }, {
      signal: controller.signal,
      spawned,
      onSpawn: () => controller.abort(new Error('the caller went away')),
    }).then(
      () => assert.fail('start should fail'),
      (err: Error) => err,
    );
    assert.equal(error.message, 'the caller went away');
    assertGone(spawned[0]!.pid);
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(branches(repo), ['dev', 'main']);

    const fabric = newFabric();
    const already = AbortSignal.abort(new Error('too late'));
    await assert.rejects(start(runner('report'), 'late', {}, { fabric, signal: already, spawned }), /too late/);
    assert.equal(spawned.length, 1, 'nothing spawned for an aborted signal');
    assert.equal(fabric.directory.admit('late').name, 'late-0', 'nor admitted');
  });

  it('a command that cannot run fails start', async () => {
    const r = new LocalRunner({ command: join(tempDir(), 'no-such-worker') });
    await assert.rejects(start(r, 'ghost', {}), /worker ghost-0 .* did not complete its hello: could not run .*ENOENT/);
  });
});

describe('GitWorktreeFactory', () => {
  it('runs a worker in a fresh worktree on a new branch made from the base branch', async () => {
    const repo = makeRepo();
    const viaLink = join(tempDir(), 'link-to-repo');
    symlinkSync(repo, viaLink);
    const worker = await start(runner('report', { workspaceFactory: new GitWorktreeFactory() }), 'lead', { workspace_root: viaLink, base_branch: 'dev', roster: ['helper'] });
    const dir = join(repo, '.git', 'chatty-worktrees', 'lead-0');
    assert.deepEqual(worker.spawnContext, { workspace_root: dir, base_branch: 'chatty/lead-0', roster: ['helper'] });
    const seen = await report(worker);
    assert.equal(seen.cwd, dir);
    assert.equal(seen.env.PWD, dir);
    assert.equal(seen.branch, 'chatty/lead-0');
    assert.equal(seen.head, g(repo, 'rev-parse', 'dev'));
    assert.ok(seen.files.includes('dev.txt'), 'the base branch\'s files');
    assert.deepEqual(seen.spawnContext, worker.spawnContext);
    assert.equal(g(repo, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the repository\'s own checkout is untouched');
    assert.equal(g(repo, 'status', '--porcelain'), '', 'the worktrees are not content of the repository');
    await worker.stop(1000);
    assert.equal(existsSync(dir), false);
    assert.deepEqual(branches(repo), ['dev', 'main']);
  });

  it('a sub-leader\'s callee branches from the sub-leader\'s branch; release keeps a branch with commits and deletes an empty one', async () => {
    const repo = makeRepo();
    const factory = new GitWorktreeFactory();
    const fabric = newFabric();
    const lead = await start(runner('commit', { workspaceFactory: factory }), 'lead', { workspace_root: repo, base_branch: 'main' }, { fabric });
    const leadSeen = await report(lead);
    assert.equal(leadSeen.branch, 'chatty/lead-0');
    assert.notEqual(leadSeen.head, g(repo, 'rev-parse', 'main'), 'the lead committed');

    // The broker derives the callee's context from the caller's: the lead's, as its runner moved it.
    const helper = await start(runner('report', { workspaceFactory: factory }), 'helper', lead.spawnContext, { fabric });
    const helperDir = join(repo, '.git', 'chatty-worktrees', 'helper-0');
    assert.deepEqual(helper.spawnContext, { workspace_root: helperDir, base_branch: 'chatty/helper-0', roster: [] });
    const helperSeen = await report(helper);
    assert.equal(helperSeen.cwd, helperDir);
    assert.equal(helperSeen.branch, 'chatty/helper-0');
    assert.equal(helperSeen.head, leadSeen.head, 'made from the lead\'s branch, at the lead\'s commit');
    assert.ok(helperSeen.files.includes('lead-0.txt'));
    assert.deepEqual(branches(repo), ['chatty/helper-0', 'chatty/lead-0', 'dev', 'main']);

    await helper.stop(1000);
    assert.equal(existsSync(helperDir), false);
    assert.deepEqual(branches(repo), ['chatty/lead-0', 'dev', 'main'], 'the helper\'s empty branch is deleted');
    await lead.stop(1000);
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(branches(repo), ['chatty/lead-0', 'dev', 'main'], 'the lead\'s branch, with its commit, is kept');
    assert.equal(g(repo, 'rev-parse', 'chatty/lead-0'), leadSeen.head);
    assert.equal(g(repo, 'show', 'chatty/lead-0:lead-0.txt'), 'written by lead-0');
  });

  it('concurrent creates on one repository each get their own worktree and branch, even under names that read alike', async () => {
    const repo = makeRepo();
    const directory = new Directory();
    const factories = [new GitWorktreeFactory(), new GitWorktreeFactory()];
    const specs = ['a b', 'a_b', 'a/b', 'helper', 'helper', 'helper', 'x', 'y'];
    const made = await Promise.all(specs.map((spec, i) => factories[i % 2]!.create(directory.admit(spec), { workspace_root: repo, base_branch: 'main', roster: [] })));
    const names = made.map((w) => w.spawnContext.base_branch);
    assert.equal(new Set(names).size, specs.length);
    assert.equal(new Set(made.map((w) => w.dir)).size, specs.length);
    assert.deepEqual(names.slice(0, 3).sort(), ['chatty/a_b-0', 'chatty/a_b-0.1', 'chatty/a_b-0.2']);
    assert.deepEqual(names.slice(3), ['chatty/helper-0', 'chatty/helper-1', 'chatty/helper-2', 'chatty/x-0', 'chatty/y-0']);
    for (const w of made) {
      assert.equal(w.spawnContext.workspace_root, w.dir);
      assert.equal(g(w.dir, 'rev-parse', '--abbrev-ref', 'HEAD'), w.spawnContext.base_branch);
    }
    assert.equal(worktrees(repo).length, specs.length + 1);
    await Promise.all(made.flatMap((w) => [w.release(), w.release()]));
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(branches(repo), ['dev', 'main']);
  });

  it('steps over a branch or folder an earlier run left, and release is idempotent', async () => {
    const repo = makeRepo();
    g(repo, 'branch', 'chatty/lead-0', 'main');
    mkdirSync(join(repo, '.git', 'chatty-worktrees', 'lead-0.1'), { recursive: true });
    const factory = new GitWorktreeFactory();
    const workspace = await factory.create(new Directory().admit('lead'), { workspace_root: repo, base_branch: 'main', roster: [] });
    assert.equal(workspace.spawnContext.base_branch, 'chatty/lead-0.2');
    assert.equal(workspace.dir, join(repo, '.git', 'chatty-worktrees', 'lead-0.2'));
    await Promise.all([workspace.release(), workspace.release()]);
    await workspace.release();
    assert.deepEqual(branches(repo), ['chatty/lead-0', 'dev', 'main'], 'the old branch is not ours to delete');
    assert.equal(existsSync(workspace.dir), false);
  });

  it('a workspace_root inside a repository gives the same folder inside the worktree; root and branchPrefix are options', async () => {
    const repo = makeRepo();
    const elsewhere = tempDir();
    const factory = new GitWorktreeFactory({ root: elsewhere, branchPrefix: 'agents/' });
    const workspace: Workspace = await factory.create(new Directory().admit('lead'), { workspace_root: join(repo, 'sub'), base_branch: 'main', roster: [] });
    assert.equal(workspace.dir, join(elsewhere, 'lead-0', 'sub'));
    assert.deepEqual(workspace.spawnContext, { workspace_root: workspace.dir, base_branch: 'agents/lead-0', roster: [] });
    assert.equal(g(workspace.dir, 'rev-parse', '--show-prefix'), 'sub/');
    await workspace.release();
    assert.equal(existsSync(join(elsewhere, 'lead-0')), false);
    assert.deepEqual(worktrees(repo), [repo]);
  });

  it('a relative root that a caller turned into a link out of its tree is refused: no worktree is made where the link leads', async () => {
    const repo = makeRepo();
    const factory = new GitWorktreeFactory({ root: '.worktrees' });
    const lead: Workspace = await factory.create(new Directory().admit('lead'), { workspace_root: repo, base_branch: 'main', roster: [] });
    assert.equal(lead.dir, join(repo, '.worktrees', 'lead-0'));
    // Its callees' worktrees would go in `<its worktree>/.worktrees`: it makes that a link elsewhere.
    const elsewhere = tempDir();
    symlinkSync(elsewhere, join(lead.dir, '.worktrees'));
    await assert.rejects(
      factory.create(new Directory().admit('helper'), lead.spawnContext),
      new Error(`a worktree for helper-0: the worktrees' folder ".worktrees" leads to ${JSON.stringify(realpathSync(elsewhere))} through a link inside workspace_root ${JSON.stringify(lead.dir)}`),
    );
    assert.deepEqual(readdirSync(elsewhere), []);
    assert.deepEqual(branches(repo), ['chatty/lead-0', 'dev', 'main']);
    await lead.release();
  });

  it('a folder whose name holds a line break is the folder asked for, not the part before the break', async () => {
    // git prints the prefix raw: read by lines, `a\nb/` was `a`, a folder the broker never checked.
    const repo = makeRepo();
    mkdirSync(join(repo, 'a'));
    writeFileSync(join(repo, 'a', 'kept.txt'), 'a\n');
    g(repo, 'add', '-A');
    g(repo, 'commit', '-q', '-m', 'a');
    const odd = join(repo, 'a\nb');
    mkdirSync(odd);
    const factory = new GitWorktreeFactory();
    const workspace: Workspace = await factory.create(new Directory().admit('lead'), { workspace_root: odd, base_branch: 'main', roster: [] });
    assert.equal(workspace.dir, join(repo, '.git', 'chatty-worktrees', 'lead-0', 'a\nb'));
    await workspace.release();
  });

  it('refuses a workspace_root whose folder is a symlink in the caller\'s commit: the callee never runs outside its worktree', async () => {
    const repo = makeRepo();
    const factory = new GitWorktreeFactory();
    const fabric = newFabric();
    const lead = await start(runner('report', { workspaceFactory: factory }), 'lead', { workspace_root: repo, base_branch: 'main' }, { fabric });
    const leadDir = lead.spawnContext.workspace_root!;
    // The hostile lead: commits `sub` (and `deep/inner`) as symlinks out of its tree, then puts real folders back.
    const outside = tempDir();
    rmSync(join(leadDir, 'sub'), { recursive: true });
    symlinkSync(repo, join(leadDir, 'sub'));
    mkdirSync(join(leadDir, 'deep'));
    symlinkSync(outside, join(leadDir, 'deep', 'inner'));
    g(leadDir, 'add', '-A');
    g(leadDir, 'commit', '-q', '-m', 'links out');
    for (const link of ['sub', 'deep/inner']) {
      rmSync(join(leadDir, link));
      mkdirSync(join(leadDir, link));
    }
    const marker = join(tempDir(), 'ran');
    for (const [prefix, linkName] of [['sub', 'sub'], ['sub/nested', 'sub'], ['deep/inner', 'deep/inner']] as const) {
      const spawned: ChildProcess[] = [];
      mkdirSync(join(leadDir, prefix), { recursive: true });
      const error = await start(runner('report', { marker, workspaceFactory: factory }), 'helper', { ...lead.spawnContext, workspace_root: join(leadDir, prefix) }, { fabric, spawned }).then(
        () => assert.fail('start should fail'),
        (err: Error) => err,
      );
      assert.match(error.message, new RegExp(`^runner: no workspace for helper-\\d, so its worker was not started: a worktree for helper-\\d: workspace_root's folder "${linkName}" is a symbolic link in the base commit of chatty/lead-0, so it is refused \\(a worktree never leads out of itself\\)$`));
      assert.equal(spawned.length, 0, 'no child spawned');
      assert.equal(existsSync(marker), false, 'the callee never ran');
    }
    assert.equal(existsSync(join(repo, 'lead-0.txt')), false);
    assert.deepEqual(worktrees(repo), [repo, join(repo, '.git', 'chatty-worktrees', 'lead-0')], 'the refused worktrees are removed');
    assert.deepEqual(branches(repo), ['chatty/lead-0', 'dev', 'main']);
    await lead.stop(1000);
  });

  it('an inherited GIT_DIR sends neither the factory\'s git nor the worker\'s elsewhere', async () => {
    const repo = makeRepo();
    const other = makeRepo();
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = join(other, '.git');
    try {
      const worker = await start(runner('report', { workspaceFactory: new GitWorktreeFactory() }), 'lead', { workspace_root: repo, base_branch: 'dev' });
      const seen = await report(worker);
      assert.equal(seen.env.GIT_DIR, null);
      assert.equal(seen.branch, 'chatty/lead-0');
      assert.equal(seen.cwd, join(repo, '.git', 'chatty-worktrees', 'lead-0'));
      await worker.stop(1000);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
    assert.deepEqual(worktrees(repo), [repo]);
    assert.deepEqual(worktrees(other), [other]);
    assert.deepEqual(branches(other), ['dev', 'main']);
  });

  it('names branches and folders from node names safely', () => {
    assert.equal(worktreeName('helper-0'), 'helper-0');
    assert.equal(worktreeName('a b/../c-1'), 'a_b____c-1');
    assert.equal(worktreeName('.hidden-0'), '_.hidden-0');
    assert.equal(worktreeName('-x-0'), '_-x-0');
    assert.equal(worktreeName('x.lock'), 'x.lock_');
    assert.equal(worktreeName('dots..-0'), 'dots__-0');
  });
});

describe('workerEnv', () => {
  it('keeps the broker\'s environment but git\'s repository-local variables and Node\'s IPC plumbing, and says PWD', () => {
    const env = workerEnv(
      {
        PATH: '/bin',
        ANTHROPIC_API_KEY: 'kept',
        GIT_DIR: '/elsewhere/.git',
        GIT_WORK_TREE: '/elsewhere',
        GIT_INDEX_FILE: '/elsewhere/.git/index',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.hooksPath',
        GIT_CONFIG_VALUE_0: '/evil',
        GIT_AUTHOR_NAME: 'kept too',
        NODE_CHANNEL_FD: '3',
        NODE_OPTIONS: '--max-old-space-size=4096',
        PWD: '/broker',
      },
      '/work/tree',
    );
    assert.deepEqual(env, {
      PATH: '/bin',
      ANTHROPIC_API_KEY: 'kept',
      GIT_AUTHOR_NAME: 'kept too',
      NODE_OPTIONS: '--max-old-space-size=4096',
      PWD: '/work/tree',
    });
    assert.equal(workerEnv({ PWD: '/broker' }).PWD, '/broker');
  });
});

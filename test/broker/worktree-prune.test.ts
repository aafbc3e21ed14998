/**
 * Worktrees a killed gateway left are pruned at the next start (issue 17, item 9): each worktree
 * the factory makes is locked with a record of its process; a prune removes those whose process is
 * gone, with their empty branches, and keeps a live process's and anything not ours. Real git,
 * real processes (children/worktree-holder.ts stands in for a gateway).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pruneWorktreesAtStart } from '../../main/agents/bundled.js';
import { GitWorktreeFactory, workerEnv } from '../../main/broker/runners/index.js';
import { Directory } from '../../main/fabric/index.js';
import { gitRepoOnMain, tempDir } from '../agents/helpers.js';
import { exited, firstLine, spawnCli } from '../helpers/cli.js';

const HOLDER = fileURLToPath(new URL('./children/worktree-holder.ts', import.meta.url));
const children: ChildProcess[] = [];
const temporary: string[] = [];
after(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function repository(): string {
  const dir = tempDir('chatty-prune-');
  temporary.push(dir);
  return gitRepoOnMain(dir);
}

const g = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8', env: workerEnv(process.env) }).trim();
const branches = (repo: string) => g(repo, 'branch', '--format=%(refname:short)').split('\n').sort();
const worktrees = (repo: string) =>
  g(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length))
    .sort();

/** A process holding `count` worktrees of `repo`; resolves once they are made, with their folders. */
async function holder(repo: string, count: number, commit = false): Promise<{ child: ChildProcess; dirs: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, repo, String(count), ...(commit ? ['commit'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, dirs: JSON.parse(line) as string[] };
}

async function sigkill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('pruning worktrees left by a killed gateway', () => {
  it('removes a killed process\'s worktrees and empty branches, keeps its branch with commits, a live process\'s worktrees, and what is not ours', async () => {
    const repo = repository();
    const killed = await holder(repo, 2, true);
    const live = await holder(repo, 1);
    // Not ours: a chatty/ branch in our folder with no record, and a worktree locked by someone else.
    const folder = join(repo, '.git', 'chatty-worktrees');
    g(repo, 'worktree', 'add', '-q', '-b', 'chatty/by-hand', join(folder, 'by-hand'), 'main');
    g(repo, 'worktree', 'add', '-q', '--lock', '--reason', 'a person\'s', '-b', 'chatty/locked-by-hand', join(folder, 'locked-by-hand'), 'main');
    await sigkill(killed.child);
    const [withWork, empty] = killed.dirs.map((dir) => dir.slice(folder.length + 1)) as [string, string];

    const lines: string[] = [];
    const report = await new GitWorktreeFactory({ log: (line) => lines.push(line) }).prune(repo);
    assert.deepEqual(report, { worktrees: 2, branches: 1, keptBranches: 1, live: 1, refused: 0, left: 0 });
    assert.deepEqual(lines, [`worktrees: pruned 2 left in ${repo} by gateways that are gone (branches: 1 deleted, 1 kept for their commits); 1 held by live processes kept`]);
    for (const dir of killed.dirs) assert.equal(existsSync(dir), false);
    assert.deepEqual(worktrees(repo), [repo, join(folder, 'by-hand'), join(folder, 'locked-by-hand'), ...live.dirs].sort());
    assert.deepEqual(branches(repo), ['chatty/by-hand', `chatty/${withWork}`, 'chatty/locked-by-hand', `chatty/${live.dirs[0]!.slice(folder.length + 1)}`, 'main'].sort());
    assert.ok(!branches(repo).includes(`chatty/${empty}`));
    assert.equal(g(repo, 'show', `chatty/${withWork}:work.txt`), 'work a killed worker committed', 'the killed worker\'s commit is kept');

    // The live one, once killed too, goes at the next prune; a second prune finds nothing.
    await sigkill(live.child);
    assert.deepEqual(await new GitWorktreeFactory().prune(repo), { worktrees: 1, branches: 1, keptBranches: 0, live: 0, refused: 0, left: 0 });
    assert.deepEqual(await new GitWorktreeFactory().prune(repo), { worktrees: 0, branches: 0, keptBranches: 0, live: 0, refused: 0, left: 0 });
    assert.deepEqual(worktrees(repo), [repo, join(folder, 'by-hand'), join(folder, 'locked-by-hand')].sort());
  });

  it('the next start prunes: the composition\'s call at start, and else a factory\'s first worktree in the repository', async () => {
    const repo = repository();
    const killed = await holder(repo, 1);
    await sigkill(killed.child);
    const lines: string[] = [];
    await pruneWorktreesAtStart({ kind: 'git', workspaceRoot: repo, baseBranch: 'main' }, (line) => lines.push(line));
    assert.deepEqual(lines, [`worktrees: pruned 1 left in ${repo} by gateways that are gone (branches: 1 deleted); 0 held by live processes kept`]);
    assert.equal(existsSync(killed.dirs[0]!), false);
    await pruneWorktreesAtStart({ kind: 'directory', workspaceRoot: repo }, (line) => lines.push(line));
    assert.equal(lines.length, 1, 'no worktrees, no prune, no line');

    // An embedder that never prunes: the factory's first create in the repository does, before it makes its own.
    const other = repository();
    const left = await holder(other, 1);
    await sigkill(left.child);
    const factoryLines: string[] = [];
    const factory = new GitWorktreeFactory({ log: (line) => factoryLines.push(line) });
    const made = await factory.create(new Directory().admit('fresh'), { workspace_root: other, base_branch: 'main', roster: [] });
    assert.equal(existsSync(left.dirs[0]!), false);
    assert.deepEqual(factoryLines, [`worktrees: pruned 1 left in ${other} by gateways that are gone (branches: 1 deleted); 0 held by live processes kept`]);
    await factory.create(new Directory().admit('again'), { workspace_root: other, base_branch: 'main', roster: [] }).then((w) => w.release());
    assert.equal(factoryLines.length, 1, 'once per repository');
    await made.release();
    assert.deepEqual(worktrees(other), [other]);
    assert.deepEqual(branches(other), ['main']);
  });
});

describe('serve prunes at its start', () => {
  it('`chatty-gateway serve` in a repository where a killed gateway left a worktree removes it and says so on stderr', async () => {
    const repo = repository();
    const killed = await holder(repo, 1);
    await sigkill(killed.child);
    const modules = tempDir('chatty-prune-modules-');
    temporary.push(modules);
    const serve = spawnCli(['serve', '--json', '--runtime-dir', join(modules, 'run'), '--modules-dir', modules, '--no-bundled-agents'], process.env, repo);
    children.push(serve);
    let stderr = '';
    serve.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const ready = JSON.parse(await firstLine(serve)) as { event: string };
    assert.equal(ready.event, 'ready');
    assert.ok(stderr.includes(`chatty-gateway: worktrees: pruned 1 left in ${repo} by gateways that are gone (branches: 1 deleted); 0 held by live processes kept\n`), stderr);
    assert.equal(existsSync(killed.dirs[0]!), false);
    assert.deepEqual(worktrees(repo), [repo]);
    const status = exited(serve);
    serve.kill('SIGTERM');
    assert.equal((await status).code, 0, stderr);
  });
});

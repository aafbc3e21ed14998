/**
 * The broker as an embedder reaches it: through `ProtocolGateway` (withVirtualAgent,
 * openParticipant, transport, stop), and with real git worktrees under each virtual agent.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GitWorktreeFactory, LocalRunner, ProtocolGateway } from '../../main/index.js';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { AGENT, ProgressLog, isAlive, plan, splitJson } from './helpers.js';

const tsx = import.meta.resolve('tsx');

function pidsDir(): string {
  return mkdtempSync(join(tmpdir(), 'chatty-gw-pids-'));
}

describe('ProtocolGateway owns one broker', () => {
  it('withVirtualAgent, openParticipant and transport(); stop() with tasks in flight leaves no process', async () => {
    const pids = pidsDir();
    const env = { ...process.env, CHATTY_TEST_PIDS: pids };
    const runner = new LocalRunner({ command: process.execPath, args: ['--import', tsx, AGENT], env, reapGraceMs: 1_000 });
    const registry = new ModuleRegistry({ logger: { log() {} } });
    const gateway = new ProtocolGateway(registry, { broker: { cancelGraceMs: 1_000, log: () => {} } })
      .withVirtualAgent('lead', runner, { description: 'leads' })
      .withVirtualAgent('helper', runner);
    try {
      await gateway.openParticipant('coder', process.execPath, ['--import', tsx, AGENT, '--serve-many'], { env });
      const root = gateway.transport();
      assert.equal(root, gateway.transport(), 'one root per gateway');
      assert.deepEqual((await root.listAgents()).map((a) => `${a.name}:${a.origin}`), ['coder-0:participant', 'lead:virtual', 'helper:virtual']);
      const progress = new ProgressLog();
      const call = root.invoke('lead', plan({ delegate: { to: 'helper', prompt: { hang: true } } }), { onProgress: progress.push });
      await progress.until((e) => 'Step' in e && e.Step.includes('helper-0 waiting'));
      await gateway.stop();
      const left = readPids(pids).filter(isAlive);
      assert.deepEqual(left, [], 'stop() reaped the participant and the whole tree in flight');
      assert.equal(readPids(pids).length, 3);
      assert.equal((await call).success, false);
    } finally {
      await gateway.stop();
      await registry.close();
      rmSync(pids, { recursive: true, force: true });
    }
  });
});

describe("the broker's caps through ProtocolGateway", () => {
  it('options.broker.maxWorkers reaches the broker: past it a call is refused at once', { timeout: 180_000 }, async () => {
    const runner = new LocalRunner({ command: process.execPath, args: ['--import', tsx, AGENT], reapGraceMs: 1_000 });
    const registry = new ModuleRegistry({ logger: { log() {} } });
    const gateway = new ProtocolGateway(registry, { broker: { cancelGraceMs: 1_000, log: () => {}, maxWorkers: 1 } }).withVirtualAgent('helper', runner);
    try {
      const root = gateway.transport();
      const progress = new ProgressLog();
      const held = root.invoke('helper', plan({ hang: true }), { onProgress: progress.push });
      await assert.rejects(root.invoke('helper', plan({ echo: 'a second' })), /^RootCallError: refused: too many workers: at most 1 live at once in this gateway \(maxWorkers\)$/);
      await progress.until((e) => 'Step' in e && e.Step === 'helper-0 waiting');
      await gateway.stop();
      assert.equal((await held).success, false);
    } finally {
      await gateway.stop();
      await registry.close();
    }
  });
});

describe('withVirtualAgent after start()', () => {
  it('publishes the agent on the running gateway: listed and run like one published before', async () => {
    const runtime = mkdtempSync(join(tmpdir(), 'chatty-gw-run-'));
    const runner = new LocalRunner({ command: process.execPath, args: ['--import', tsx, AGENT], reapGraceMs: 1_000 });
    const registry = new ModuleRegistry({ logger: { log() {} } });
    const gateway = new ProtocolGateway(registry, { broker: { cancelGraceMs: 1_000, log: () => {} } }).withRuntimeDir(runtime);
    try {
      await gateway.start();
      const root = gateway.transport();
      assert.deepEqual(await root.listAgents(), []);
      assert.equal(gateway.withVirtualAgent('late', runner, { description: 'published after start' }), gateway, 'chainable');
      assert.deepEqual((await root.listAgents()).map((a) => [a.name, a.origin, a.description]), [['late', 'virtual', 'published after start']]);
      const progress = new ProgressLog();
      const result = await root.invoke('late', plan({ echo: 'after start' }), { onProgress: progress.push });
      assert.equal(result.success, true, result.error);
      assert.equal(result.response, 'after start');
      assert.deepEqual(progress.events[0], { Admitted: 'late-0' });
    } finally {
      await gateway.stop();
      await registry.close();
      rmSync(runtime, { recursive: true, force: true });
    }
  });
});

describe('virtual agents in git worktrees', () => {
  it("a sub-leader's worker branches from the sub-leader's branch in a real repository", async () => {
    const repo = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-gw-repo-')));
    const git = (...args: string[]): string =>
      execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd: repo, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'README'), 'hello\n');
    git('add', 'README');
    git('commit', '-q', '-m', 'first');
    const runner = new LocalRunner({ command: process.execPath, args: ['--import', tsx, AGENT], workspaceFactory: new GitWorktreeFactory(), reapGraceMs: 1_000 });
    const registry = new ModuleRegistry({ logger: { log() {} } });
    const gateway = new ProtocolGateway(registry, { broker: { root: { workspaceRoot: repo, baseBranch: 'main' }, log: () => {} } })
      .withVirtualAgent('lead', runner)
      .withVirtualAgent('helper', runner);
    try {
      const result = await gateway.transport().invoke('lead', plan({ seq: [{ commit: 'the lead was here' }, { context: true }, { delegate: { to: 'helper', prompt: { context: true } } }] }));
      assert.equal(result.success, true, result.error);
      const [lead, delegated] = splitJson(result.response) as [Context, { response: string }];
      const helper = JSON.parse(delegated.response) as Context;
      assert.equal(lead.branch, 'chatty/lead-0');
      assert.equal(lead.spawnContext.base_branch, 'chatty/lead-0');
      assert.equal(lead.cwd, lead.spawnContext.workspace_root);
      assert.notEqual(lead.cwd, repo);
      assert.equal(helper.branch, 'chatty/helper-0');
      assert.equal(helper.spawnContext.base_branch, 'chatty/helper-0');
      assert.notEqual(helper.cwd, lead.cwd);
      assert.equal(helper.head, lead.head, "the helper's branch starts at the lead's commit, not main's");
      assert.notEqual(lead.head, git('rev-parse', 'main'));
      // Both worktrees are gone once the tasks ended; the lead's branch, which has a commit, is kept.
      assert.equal(git('worktree', 'list').split('\n').length, 1);
      assert.equal(git('branch', '--list', 'chatty/*').replace(/^[*+ ]+/gm, ''), 'chatty/lead-0');
    } finally {
      await gateway.stop();
      await registry.close();
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

interface Context {
  cwd: string;
  branch: string;
  head: string;
  spawnContext: { workspace_root: string; base_branch: string };
}

function readPids(dir: string): number[] {
  return execFileSync('ls', [dir], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
}

/**
 * The gateway's own configuration (its approvals rules file, the plugins' grants file, each
 * plugins.lock, approvals.log) lies in the agents' workspace when `serve` runs in $HOME
 * (`~/.config/chatty/approvals.json`). The desktop app refuses such a workspace for a bridged app;
 * `serve` and a headless gateway did not, and a worker's write of one read as a plain write: one
 * approved write added an "always allow" rule or a grant. Such a request is now tagged
 * `gateway-config` (as asked, through links, through `~`, a folder holding one, any command
 * naming one), no rule approves it and nothing is offered to remember. A real gateway, a real
 * ModuleRegistry with a grants file and a lock, real workers.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { LocalRunner, ProtocolGateway, type ApprovalRequest } from '../../main/index.js';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { AGENT, plan, splitJson } from './helpers.js';

let home = '';
const savedHome = process.env['HOME'];
before(() => {
  home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-gateway-config-')));
  mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
  mkdirSync(join(home, 'ship'));
  writeFileSync(join(home, 'ship', 'plugins.lock'), JSON.stringify({ version: 1, plugins: [] }));
  symlinkSync(join(home, '.config', 'chatty'), join(home, 'cfg')); // a link to the folder: cfg/approvals.json is the rules file
  process.env['HOME'] = home; // `~` is the gateway's home: this one
});
after(() => {
  if (savedHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = savedHome;
  rmSync(home, { recursive: true, force: true });
});

it('a request that writes, or names, the rules file, the grants file, a plugins.lock or approvals.log is tagged gateway-config; no rule approves it, nothing is offered to remember', { timeout: 180_000 }, async () => {
  const registry = new ModuleRegistry({ cacheDir: join(home, 'cache'), logger: { log() {} }, grants: { file: join(home, '.config', 'chatty', 'plugin-grants.json'), locks: [join(home, 'ship', 'plugins.lock')] } });
  const runner = new LocalRunner({ command: process.execPath, args: ['--import', import.meta.resolve('tsx'), AGENT], reapGraceMs: 1_000 });
  const gateway = new ProtocolGateway(registry, {
    runtimeDir: join(home, '.cache', 'chatty-run'),
    approvals: { file: join(home, '.config', 'chatty', 'approvals.json') },
    broker: { cancelGraceMs: 1_000, log: () => {}, root: { workspaceRoot: home } },
  }).withVirtualAgent('coder', runner);
  await gateway.start();
  try {
    const asked: ApprovalRequest[] = [];
    gateway.transport().onApproval((request) => {
      asked.push(request);
      return 'denied';
    });
    // Rules that would approve them, were they plain writes: they must not.
    gateway.approvals.add({ effect: 'allow', kind: 'write', agent: '*', match: { glob: '**' } });
    gateway.approvals.add({ effect: 'allow', kind: 'exec', agent: '*', match: { prefix: 'cp' } });
    const tagged: ['exec' | 'write', string][] = [
      ['write', '.config/chatty/approvals.json'],
      ['write', '.config/chatty/plugin-grants.json'],
      ['write', 'ship/plugins.lock'],
      ['write', '.cache/chatty-run/approvals.log'],
      ['write', 'cfg/approvals.json'], // through a linked folder
      ['exec', 'cp /tmp/rules.json .config/Chatty/approvals.json'], // another case
      ['exec', 'cp /tmp/rules.json ~/.config/chatty/approvals.json'],
      ['exec', "echo '{}' > $HOME/.config/chatty/plugin-grants.json"],
      ['exec', 'rm -rf .config/chatty'], // the folder that holds them
      ['exec', 'chmod 666 .config/chatty/approvals.json'], // others may write it: refused, its deny rules with it
      ['exec', 'python3 edit.py ship/plugins.lock'], // any program given one
      ['exec', 'git checkout -- .config/chatty/approvals.json'],
    ];
    const plain: ['exec' | 'write', string][] = [
      ['write', 'notes.txt'],
      ['exec', 'grep -r TODO .'], // naming the folder that holds them is no write
    ];
    const all = [...tagged, ...plain];
    const result = await gateway.transport().invoke('coder', plan({ seq: all.map(([kind, command]) => ({ approve: { kind, command_or_path: command } })) }));
    assert.equal(result.success, true, result.error);
    const verdicts = splitJson(result.response).flat() as string[];
    // Every tagged one was put to the person (denied by them); the plain write was approved by the rule unasked.
    assert.deepEqual(
      asked.map((r) => r.command_or_path),
      all.map(([, c]) => c).filter((c) => c !== 'notes.txt'),
    );
    assert.deepEqual(verdicts, all.map(([, c]) => (c === 'notes.txt' ? 'approved' : 'denied')));
    for (const request of asked) {
      const expected = tagged.some(([, c]) => c === request.command_or_path);
      assert.equal(request.danger.includes('gateway-config'), expected, `${request.command_or_path}: ${request.danger.join(', ')}`);
      if (expected) assert.deepEqual(request.proposals, [], `${request.command_or_path}: nothing to remember`);
    }
  } finally {
    await gateway.stop();
    await registry.close();
  }
});

it('the registry names the files it grants from', () => {
  const registry = new ModuleRegistry({ cacheDir: join(home, 'cache'), logger: { log() {} }, grants: { file: join(home, 'g.json'), locks: [join(home, 'ship', 'plugins.lock')] } });
  assert.deepEqual(registry.configFiles(), [join(home, 'g.json'), join(home, 'ship', 'plugins.lock')]);
});

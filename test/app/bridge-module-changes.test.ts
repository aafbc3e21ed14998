// The desktop bridge pushes the plugin list as the registry changes (`chatty:modules`): a real
// registry of real components behind a real started gateway, attachDesktopBridge on a stand-in
// webContents (its `send` recorded), each push checked against the contract's zod schema.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EVENT_CHANNELS, INVOKE_CHANNELS, ModuleListSchema, type ModuleList, type Snapshot } from '../../main/app/bridge/contract.js';
import { attachDesktopBridge, DEFAULT_PAGE_URL } from '../../main/app/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace } from './bridge-fixture.js';
import { buildFixture, fixtureManifest, loadFixtures, writeModuleDir, type LoadedFixtures } from '../helpers/wasm-fixtures.js';
import { StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

let plugins: LoadedFixtures;
let gw: RunningGateway;
let contents: StandInWebContents;
let detach: () => void;
const ipc = new StandInIpcMain();

before(async () => {
  plugins = await loadFixtures([{ name: 'text-tools', kind: 'echo' }]);
  gw = await gatewayWithWorkspace(plugins.registry);
  contents = new StandInWebContents();
  contents.mainFrame.url = DEFAULT_PAGE_URL;
  detach = attachDesktopBridge(gw.gateway, contents);
});
after(async () => {
  detach();
  await gw.close();
  await plugins.close();
});

/** The first plugin list pushed from `from` on (an index into what was sent) that says `name` had `change` checked against the schema. */
async function pushed(from: number, name: string, change: ModuleList['changes'][number]['change']): Promise<ModuleList> {
  const sentAt = (payload: unknown): number => contents.sent.findIndex((s) => s.payload === payload);
  const list = await contents.sentOn<ModuleList>(EVENT_CHANNELS.modules, (l) => sentAt(l) >= from && l.changes.some((c) => c.name === name && c.change === change));
  return ModuleListSchema.parse(list);
}

const names = (list: ModuleList): string[] => list.modules.map((m) => m.name);

test('a module coming online, reloaded (a new version), and unloaded: each is pushed with the whole list, its tools listed', async () => {
  const echo = await buildFixture('echo');
  const dir = writeModuleDir(plugins.root, 'late', { manifest: fixtureManifest('late'), component: echo });

  let mark = contents.sent.length;
  await plugins.registry.loadModule(dir);
  const online = await pushed(mark, 'late', 'served');
  assert.deepEqual(names(online), ['late', 'text-tools']);
  const late = online.modules.find((m) => m.name === 'late')!;
  assert.equal(late.version, '1.0.0');
  assert.deepEqual(late.surfaces, ['/mcp/late', '/mcp/late/sse']);
  assert.ok(late.tools.some((t) => t.name === 'echo' && t.description === 'Returns its arguments-json.'));

  writeFileSync(join(dir, 'module.toml'), readFileSync(join(dir, 'module.toml'), 'utf8').replace('version = "1.0.0"', 'version = "1.1.0"'));
  mark = contents.sent.length;
  await plugins.registry.reload('late');
  const reloaded = await pushed(mark, 'late', 'reloaded');
  assert.equal(reloaded.modules.find((m) => m.name === 'late')?.version, '1.1.0');

  mark = contents.sent.length;
  await plugins.registry.unload('late');
  const gone = await pushed(mark, 'late', 'unloaded');
  assert.deepEqual(names(gone), ['text-tools']);
});

test('a module building, then failed: pushed as pending with its state and reason; the snapshot has it for a (re)loaded window', async () => {
  let mark = contents.sent.length;
  plugins.registry.building('slow-build');
  const building = await pushed(mark, 'slow-build', 'pending');
  assert.deepEqual(building.pending, [{ name: 'slow-build', state: 'building' }]);
  assert.deepEqual(names(building), ['text-tools']);

  mark = contents.sent.length;
  plugins.registry.buildFailed('slow-build', 'npm run build exited 1: Cannot find module "x"');
  const failed = await pushed(mark, 'slow-build', 'pending');
  assert.deepEqual(failed.pending, [{ name: 'slow-build', state: 'failed', reason: 'npm run build exited 1: Cannot find module "x"' }]);

  const snapshot = (await ipc.invoke(INVOKE_CHANNELS.snapshot, contents, contents.mainFrame)) as Snapshot;
  assert.deepEqual(snapshot.pendingModules, [{ name: 'slow-build', state: 'failed', reason: 'npm run build exited 1: Cannot find module "x"' }]);
});

test('changes that come while a list is being made go out together in the next list, in order; nothing is pushed once detached', async () => {
  const mark = contents.sent.length;
  plugins.registry.building('burst-a');
  plugins.registry.building('burst-b');
  plugins.registry.buildFailed('burst-a', 'no');
  // The first list is being made when burst-b and burst-a's failure come: the next list has both.
  const last = await pushed(mark, 'burst-b', 'pending');
  const lists = contents.sent.slice(mark).filter((s) => s.channel === EVENT_CHANNELS.modules).map((s) => ModuleListSchema.parse(s.payload));
  // Every change is in exactly one list, oldest first, and the newest list is the registry as it is.
  assert.deepEqual(lists.flatMap((l) => l.changes.map((c) => c.name)), ['burst-a', 'burst-b', 'burst-a']);
  assert.deepEqual(lists.at(-1), last);
  assert.deepEqual(last.pending.filter((p) => p.name.startsWith('burst-')), [{ name: 'burst-a', state: 'failed', reason: 'no' }, { name: 'burst-b', state: 'building' }]);

  const other = new StandInWebContents();
  other.mainFrame.url = DEFAULT_PAGE_URL;
  const detachOther = attachDesktopBridge(gw.gateway, other);
  detachOther();
  const before = contents.sent.length;
  plugins.registry.building('after-detach');
  await pushed(before, 'after-detach', 'pending'); // the attached window hears it…
  assert.equal(other.sent.filter((s) => s.channel === EVENT_CHANNELS.modules).length, 0); // …the detached one never does
});

test('a module whose capability is not granted is pushed as ungranted, its reason naming the grant and how to give it', async () => {
  const denied = await loadFixtures([], { grants: { mode: 'deny' } });
  const own = await gatewayWithWorkspace(denied.registry);
  const window = new StandInWebContents();
  window.mainFrame.url = DEFAULT_PAGE_URL;
  const detachOwn = attachDesktopBridge(own.gateway, window);
  try {
    const dir = writeModuleDir(denied.root, 'gh-notes', {
      manifest: fixtureManifest('gh-notes', '[files]\nroot = "data"\n'),
      component: await buildFixture('echo'),
      extra: { 'data/readme.txt': 'notes' },
    });
    await assert.rejects(denied.registry.loadModule(dir), /not granted/);
    const list = ModuleListSchema.parse(await window.sentOn<ModuleList>(EVENT_CHANNELS.modules, (l) => l.pending.some((p) => p.name === 'gh-notes')));
    assert.deepEqual(list.changes, [{ name: 'gh-notes', change: 'pending' }]);
    assert.deepEqual(list.modules, []);
    const [entry] = list.pending;
    assert.equal(entry?.state, 'ungranted');
    assert.match(entry?.reason ?? '', /file \(read files under \.\/data\).*chatty-gateway plugin grant gh-notes/);
  } finally {
    detachOwn();
    await own.close();
    await denied.close();
  }
});

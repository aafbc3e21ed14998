// The desktop app's composition and a plugin's capability request (issue 20 item 3): the app's
// gateway started as main.ts starts it (startAppGateway), its grant desk given to the bridge as
// main.ts gives it (attachDesktopBridge's `grants`), a stand-in webContents as the window, and a
// real plugin (a WAT fixture asking for files) in CHATTY_MODULES_DIR.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startAppGateway } from '../../main/app/app-gateway.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type ModuleList, type ModuleSummary, type Snapshot } from '../../main/app/bridge/contract.js';
import { attachDesktopBridge, DEFAULT_PAGE_URL } from '../../main/app/index.js';
import { Teardown } from '../../main/app/lifecycle.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-app-grants-')));
after(() => rmSync(home, { recursive: true, force: true }));

test('a plugin that asks for files waits for the window; granted there, it is served and remembered in <userData>/plugin-grants.json', { timeout: 180_000 }, async () => {
  const modules = join(home, 'modules');
  writeModuleDir(modules, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component: await buildFixture('echo'), extra: { 'data/note.txt': 'a note' } });
  mkdirSync(join(home, 'workspace'));
  const lines: string[] = [];
  const log = { info: (line: string) => lines.push(line), error: (line: string) => lines.push(`error: ${line}`) };
  const teardown = new Teardown(log);
  const env = { CHATTY_MODULES_DIR: modules, CHATTY_RUNTIME_DIR: join(home, 'run'), CHATTY_WORKSPACE: join(home, 'workspace') };
  const userData = join(home, 'user-data');
  try {
    const { gateway, grants } = await startAppGateway({ userData, isPackaged: true, env, cwd: '/', log }, teardown);
    const contents = new StandInWebContents();
    contents.mainFrame.url = DEFAULT_PAGE_URL;
    teardown.add('detach the bridge', attachDesktopBridge(gateway, contents, { grants }));
    const ipc = new StandInIpcMain();
    const call = (channel: string, payload?: unknown): Promise<unknown> => ipc.invoke(channel, contents, contents.mainFrame, payload);

    // Asked while the plugins were opened, before any window: the window finds it in its snapshot.
    const snapshot = (await call(INVOKE_CHANNELS.snapshot)) as Snapshot;
    assert.deepEqual(
      snapshot.grants.map((g) => [g.plugin, g.version, g.asks, g.dir]),
      [['notes', '1.0.0', [{ capability: 'file', detail: 'read files under ./data', reach: '' }], join(modules, 'notes')]],
    );
    assert.match(snapshot.grants[0]!.digest, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(((await call(INVOKE_CHANNELS.listModules)) as ModuleSummary[]).map((m) => m.name), [], 'not served until granted');

    const online = contents.sentOn<ModuleList>(EVENT_CHANNELS.modules, (list) => list.changes.some((c) => c.name === 'notes' && c.change === 'served'));
    await call(INVOKE_CHANNELS.answerGrant, { requestId: snapshot.grants[0]!.requestId, decision: 'granted' });
    await online;
    assert.deepEqual(((await call(INVOKE_CHANNELS.listModules)) as ModuleSummary[]).map((m) => m.name), ['notes']);
    const file = join(userData, 'plugin-grants.json');
    assert.ok(existsSync(file), 'the grant is kept beside approvals.json');
    assert.ok(readFileSync(file, 'utf8').includes(snapshot.grants[0]!.digest), 'pinned to the digest');
    assert.equal(statSync(file).mode & 0o777, 0o600);
  } finally {
    await teardown.run();
  }
  assert.ok(!lines.some((line) => line.startsWith('error:')), lines.join('\n'));
});

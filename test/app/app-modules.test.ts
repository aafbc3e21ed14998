// The desktop app's plugins (the examples or CHATTY_MODULES_DIR, then the user's folder) and where
// its agents work.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { agentWorkspaceDir, openAppModules, userPluginsDir } from '../../main/app/app-modules.js';

const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-app-modules-')));
after(() => rmSync(home, { recursive: true, force: true }));

test('the user plugin folder is <userData>/plugins, created owner-only when missing, kept when there', () => {
  const userData = join(home, 'user-data');
  const dir = userPluginsDir(userData);
  assert.equal(dir, join(userData, 'plugins'));
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  writeFileSync(join(dir, 'keep'), 'x');
  assert.equal(userPluginsDir(userData), dir);
  assert.ok(statSync(join(dir, 'keep')).isFile());
});

test('the user folder is scanned after the main modules folder; a bad plugin there is reported and skipped', async () => {
  const modulesDir = join(home, 'modules');
  mkdirSync(modulesDir, { recursive: true });
  const userPlugins = userPluginsDir(join(home, 'user-data-2'));
  mkdirSync(join(userPlugins, 'broken'));
  writeFileSync(join(userPlugins, 'broken', 'module.toml'), 'this is not toml = = =');
  const lines: string[] = [];
  const { registry, scans } = await openAppModules(userPlugins, modulesDir, { report: (line) => lines.push(line) });
  try {
    assert.equal(scans.length, 2);
    assert.deepEqual(scans[0]?.loaded, []);
    assert.deepEqual(scans[1]?.loaded, []);
    assert.equal(scans[1]?.failed.length, 1);
    assert.equal(scans[1]?.failed[0]?.dir, join(userPlugins, 'broken'));
    assert.ok(lines.some((line) => line.includes(join(userPlugins, 'broken'))), `reported: ${lines.join(' | ')}`);
  } finally {
    await registry.close();
  }
});

test('a modules folder that does not exist is refused, as in the CLI', async () => {
  await assert.rejects(openAppModules(userPluginsDir(join(home, 'user-data-3')), join(home, 'nowhere')), /modules directory .*nowhere does not exist/);
});

test('the agents work in CHATTY_WORKSPACE, else where `npm start` ran, else (packaged) in <userData>/workspace', () => {
  const userData = join(home, 'user-data-4');
  assert.equal(agentWorkspaceDir({ env: { CHATTY_WORKSPACE: '/w/project' }, isPackaged: true, cwd: '/', userData }), '/w/project');
  assert.equal(agentWorkspaceDir({ env: {}, isPackaged: false, cwd: '/src/app', userData }), '/src/app');
  assert.equal(agentWorkspaceDir({ env: { CHATTY_WORKSPACE: '' }, isPackaged: false, cwd: '/src/app', userData }), '/src/app');
  const packaged = agentWorkspaceDir({ env: {}, isPackaged: true, cwd: '/', userData });
  assert.equal(packaged, join(userData, 'workspace'));
  assert.equal(statSync(packaged).mode & 0o777, 0o700);
});

test("launched unpackaged in this package's own folder (npm start in the repository), the agents work in <userData>/workspace, not in the app they answer to", async () => {
  const { PACKAGE_ROOT } = await import('../../main/app/app-pages.js');
  const userData = join(home, 'user-data-5');
  assert.equal(agentWorkspaceDir({ env: {}, isPackaged: false, cwd: PACKAGE_ROOT, userData }), join(userData, 'workspace'));
  assert.equal(agentWorkspaceDir({ env: {}, isPackaged: false, cwd: join(PACKAGE_ROOT, 'renderer-demo'), userData }), join(userData, 'workspace'));
  assert.equal(agentWorkspaceDir({ env: {}, isPackaged: false, cwd: '/src/app', userData }), '/src/app');
});

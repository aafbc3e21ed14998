// `npm start`'s check (scripts/desktop-preflight.ts): what stops the launch, said plainly, before
// anything is built or Electron is started.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { desktopPreflight, type DesktopSetting } from '../../scripts/desktop-preflight.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const electron45 = { version: '45.5.0', engines: { node: '>= 22.12.0' } };
const ready: DesktopSetting = { nodeVersion: '22.12.0', electron: electron45, binaryReady: true, platform: 'linux', env: { DISPLAY: ':0' } };

test("a Node below the installed Electron's floor stops npm start with the versions and what to do", () => {
  const { problems } = desktopPreflight({ ...ready, nodeVersion: '20.20.2' });
  assert.equal(problems.length, 1);
  assert.match(problems[0] ?? '', /^the desktop app needs Node >= 22\.12\.0 \(Electron 45\.5\.0's launcher.*\); this is Node 20\.20\.2\. Use Node 22\.12 or later.*npx chatty-gateway serve\.$/);
  assert.deepEqual(desktopPreflight({ ...ready, nodeVersion: '22.11.9' }).problems.length, 1);
  assert.deepEqual(desktopPreflight({ ...ready, nodeVersion: '22.12.0' }).problems, []);
  assert.deepEqual(desktopPreflight({ ...ready, nodeVersion: '24.1.0' }).problems, []);
  // The floor is the installed electron's own: a later one that asks for more is followed.
  assert.equal(desktopPreflight({ ...ready, nodeVersion: '22.12.0', electron: { version: '99.0.0', engines: { node: '>= 24.0.0' } } }).problems.length, 1);
});

test('no electron package, no display on Linux: each says what to do; a binary not yet downloaded is a note', () => {
  const missing = desktopPreflight({ ...ready, electron: undefined, binaryReady: false });
  assert.deepEqual(missing.problems, ['the desktop app needs the electron package, a devDependency of this project: run npm install (without --omit=dev) in the checkout.']);
  assert.deepEqual(missing.notes, []);
  assert.match(desktopPreflight({ ...ready, env: {} }).problems.join('\n'), /no display .*xvfb-run npm start/);
  assert.deepEqual(desktopPreflight({ ...ready, env: { WAYLAND_DISPLAY: 'wayland-0' } }).problems, []);
  assert.deepEqual(desktopPreflight({ ...ready, platform: 'darwin', env: {} }).problems, []);
  assert.match(desktopPreflight({ ...ready, binaryReady: false }).notes.join('\n'), /fetches it .* from GitHub, or from ELECTRON_MIRROR/);
});

test('npm start runs the check first, and the check exits 1 with its sentences on stderr', () => {
  const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.match(scripts['start'] ?? '', /^node --import tsx scripts\/desktop-preflight\.ts && npm run build && electron /);
  const env = { ...process.env };
  delete env['DISPLAY'];
  delete env['WAYLAND_DISPLAY'];
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/desktop-preflight.ts'], { cwd: repo, env, encoding: 'utf8' });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /^npm start: there is no display/m);
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  assert.equal(/^npm start: the desktop app needs Node >= 22\.12\.0/m.test(run.stderr), major < 22 || (major === 22 && minor < 12), run.stderr);
});

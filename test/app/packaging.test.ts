// electron-builder.yml (item 5): valid for the installed electron-builder, packaging what the app
// needs at run time, for Linux (AppImage, deb) and macOS (dmg), with no Windows target. Nothing
// here packages (that downloads Electron); `npm run dist` does, and CI does not run it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js';
import { DebugLogger, Logger, log } from 'builder-util';
import type { Configuration } from 'app-builder-lib';

const root = fileURLToPath(new URL('../../', import.meta.url));

// electron-builder logs to stdout, which the test runner reads as its own protocol: its lines go
// to stderr instead (`stream` is protected in the types, a plain property at run time).
Object.defineProperty(log, 'stream', { value: process.stderr });
assert.ok(log instanceof Logger);

async function loadConfig(): Promise<Configuration> {
  return getConfig(root, join(root, 'electron-builder.yml'), null);
}

/** electron-builder's `files` globs (minimatch style) as one test: included by some pattern, excluded by no `!` pattern. */
function packaged(patterns: readonly string[], path: string): boolean {
  const regex = (glob: string): RegExp =>
    new RegExp(
      `^${glob
        .split(/(\*\*\/|\*\*|\*)/)
        .map((part) => (part === '**/' ? '(?:.*/)?' : part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('')}$`,
    );
  const included = patterns.filter((p) => !p.startsWith('!')).some((p) => regex(p).test(path));
  const excluded = patterns.filter((p) => p.startsWith('!')).some((p) => regex(p.slice(1)).test(path));
  return included && !excluded;
}

test('electron-builder.yml is valid for the installed electron-builder (and an invalid one is caught)', async () => {
  const config = await loadConfig();
  await validateConfiguration(config, new DebugLogger(false));
  await assert.rejects(validateConfiguration({ ...config, notAnOption: true } as Configuration, new DebugLogger(false)));
});

test('the package holds the built main (with the worker program), preload and renderer, the page, the example plugins and the WIT file', async () => {
  const config = await loadConfig();
  // electron-builder normalises the list into file sets: [{ filter: [globs] }].
  const sets = Array.isArray(config.files) ? config.files : [config.files];
  const globs = sets.flatMap((set) => (typeof set === 'string' ? [set] : set && !Array.isArray(set) && typeof set === 'object' ? [set.filter ?? []].flat() : []));
  assert.ok(globs.length > 0, 'files lists globs');
  const needed = [
    'out/main/app/main.js',
    'out/main/cli/bin.js', // `chatty-gateway worker`, the bundled agents' worker program
    'out/main/plugins/worker/guest-entry.js', // a plugin's worker thread
    'out/preload/index.cjs',
    'out/renderer-demo/app.js',
    'out/renderer/index.js', // the public renderer module the page imports (<chatty-approvals>)
    'out/renderer/approvals/element.js',
    'out/main/display/index.js',
    'renderer-demo/index.html',
    'renderer-demo/style.css',
    'main/plugins/wit/plugin.wit',
    'package.json',
  ];
  for (const example of readdirSync(join(root, 'examples', 'plugins'))) needed.push(`examples/plugins/${example}/module.toml`);
  for (const path of needed) assert.ok(packaged(globs, path), `${path} is packaged`);
  for (const path of ['main/app/main.ts', 'test/app/window-options.test.ts', 'out/main/app/main.js.map', 'out/main/index.d.ts', 'renderer-demo/app.ts', 'docs/security.md', 'examples/plugins/text-tools/text-tools.wasm']) {
    assert.ok(!packaged(globs, path), `${path} is not packaged`);
  }
  assert.equal(config.extraMetadata?.['main'], 'out/main/app/main.js');
  assert.ok(existsSync(join(root, 'main', 'app', 'main.ts')), 'the entry is built from main/app/main.ts');
  assert.ok(existsSync(join(root, 'main', 'plugins', 'wit', 'plugin.wit')));
});

test('Linux AppImage and deb, macOS dmg, no Windows target; no asar; Electron-as-Node kept for the worker program', async () => {
  const config = await loadConfig();
  assert.deepEqual(config.linux?.target, ['AppImage', 'deb']);
  assert.deepEqual(config.mac?.target, ['dmg']);
  assert.equal(config.win, undefined);
  assert.equal(config.asar, false);
  assert.equal(config.electronFuses?.runAsNode, true);
  assert.equal(config.electronFuses?.enableNodeOptionsEnvironmentVariable, false);
  assert.equal(config.electronFuses?.enableNodeCliInspectArguments, false);
  assert.equal(config.electronFuses?.grantFileProtocolExtraPrivileges, false);
});

test('`npm run dist` packages; CI does not run it', () => {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  assert.match(scripts['dist'] ?? '', /npm run build && electron-builder --config electron-builder\.yml/);
  assert.doesNotMatch(readFileSync(join(root, '.ci', 'run'), 'utf8'), /\bdist\b|electron-builder/);
});

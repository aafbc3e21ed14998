// Only the demo app's composition root, main/app/main.ts, imports Electron at run time; every other
// module of main/ (the pure halves of the shell, the desktop bridge and the whole of the package's
// `./electron` entry among them) runs, and is tested, on plain Node. A type-only import is erased.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BINDINGS = new Set(['main/app/main.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [relative(root, path).split(sep).join('/')] : [];
  });
}

/** The run-time imports of 'electron' (or 'electron/…') in a source: static, dynamic, require, re-export. */
function electronImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?from\s+['"](electron(?:\/[^'"]*)?)['"]/gm)) if (!match[2]) found.push(match[0].trim());
  for (const match of text.matchAll(/^\s*import\s+['"](electron(?:\/[^'"]*)?)['"]/gm)) found.push(match[0].trim());
  for (const match of text.matchAll(/(?:import|require)\s*\(\s*['"](electron(?:\/[^'"]*)?)['"]\s*\)/g)) found.push(match[0]);
  return found;
}

test('no module of main/ but main/app/main.ts imports Electron at run time', () => {
  const files = sources(join(root, 'main'));
  assert.ok(files.includes('main/app/window-options.ts') && files.includes('main/app/security-policy.ts'));
  const offenders = files.filter((file) => !BINDINGS.has(file) && electronImports(readFileSync(join(root, file), 'utf8')).length > 0);
  assert.deepEqual(offenders, []);
  assert.ok(electronImports(readFileSync(join(root, 'main/app/main.ts'), 'utf8')).length > 0, 'the check finds the binding’s own import');
});

test('the check tells a type-only import from a run-time one', () => {
  assert.deepEqual(electronImports("import type { WebPreferences } from 'electron';"), []);
  assert.equal(electronImports("import { app } from 'electron';").length, 1);
  assert.equal(electronImports("const e = await import('electron');").length, 1);
  assert.equal(electronImports("import electron = require('electron');").length, 1);
});

test("the demo's main.ts wires the window with the package's public ./electron pieces, not the bridge's insides", () => {
  const main = readFileSync(join(root, 'main/app/main.ts'), 'utf8');
  const door = /import \{([^}]*)\} from '\.\/index\.js';/.exec(main)?.[1] ?? '';
  for (const piece of ['attachDesktopBridge', 'preloadCopy', 'policeContents', 'policeSession', 'handleAppProtocol', 'appMenuTemplate', 'quitAfterStopping']) {
    assert.ok(new RegExp(`\\b${piece}\\b`).test(door), `main.ts imports ${piece} from ./index.js`);
  }
  assert.doesNotMatch(main, /from '\.\/(bridge\/|electron-bridge\.js|security-policy\.js|app-pages\.js)/);
});

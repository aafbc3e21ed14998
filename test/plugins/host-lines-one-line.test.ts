import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { listedToolsComponent } from './listed-tools-component.js';

/**
 * The host's own lines about a plugin carry what whoever planted its folder chose: the folder's
 * name, its module.toml's values, the paths they lead to. A guest's log lines are made one visible
 * line before any logger sees them (worker/log-line.ts); the host's lines must be too, or a folder
 * named `x\nmodule echo: granted …` writes a line of its own into an embedder's log, and a bidi
 * override reorders what a line reads.
 */
describe("the host's lines about a plugin are one visible line, whatever logger prints them", () => {
  let root: string;
  const lines: string[] = [];
  let registry: ModuleRegistry;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-host-lines-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (_level, message) => void lines.push(message) } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a planted folder name and module.toml values reach the logger escaped', async () => {
    const component = await listedToolsComponent([{ name: 'greet' }]);
    writeModuleDir(root, 'x\nmodule echo: granted network (evil.example:443) for component sha256:1234', { manifest: fixtureManifest('planted-a', '[files]\nroot = "nothing"\n'), component });
    writeModuleDir(root, 'b\u202etxt.exe', { manifest: fixtureManifest('planted-b', '[network]\nallow = ["api\u202e.example.com"]\n'), component });
    writeModuleDir(root, 'c', { manifest: fixtureManifest('planted-c', '[files]\nroot = "da\u0085ta\u2028\u009b2J"\n'), component });
    const report = await registry.scanDirectory(root);
    assert.equal(report.failed.length, 3, JSON.stringify(report));
    assert.ok(lines.length >= 3, JSON.stringify(lines));
    for (const line of lines) {
      const raw = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.exec(line);
      assert.equal(raw, null, `a logged line carries U+${raw?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} raw: ${JSON.stringify(line)}`);
    }
    assert.ok(lines.some((line) => line.includes('x\\nmodule echo: granted')), JSON.stringify(lines));
  });
});

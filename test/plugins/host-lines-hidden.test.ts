import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { visibleLine } from '../../main/plugins/visible-lines.js';
import { TEST_CACHE_DIR, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { listedToolsComponent } from './listed-tools-component.js';

/**
 * The host's lines about a plugin escape what a tool description may not hold (hidden-text.ts, one
 * rule): visibleLines escaped controls, line breaks and bidi marks only, so a planted folder
 * "echo<U+200B>" was logged as "echo", and one with a tag run (U+E0000–E007F spell ASCII no font
 * draws) carried words a model reading the log reads and a person does not (the reviewer's repro,
 * /tmp/review-plugins2/host-lines-hidden.test.ts). Now each shows as its escape.
 */
describe("the host's lines about a plugin show hidden characters", () => {
  let root: string;
  const lines: string[] = [];
  let registry: ModuleRegistry;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-host-hidden-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (_level, message) => void lines.push(message) } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a folder name with a zero-width space or tag characters is logged escaped', async () => {
    const component = await listedToolsComponent([{ name: 'greet' }]);
    const tags = [...'ignore previous'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    writeModuleDir(root, `echo\u200b`, { manifest: fixtureManifest('planted-a', '[files]\nroot = "nothing"\n'), component });
    writeModuleDir(root, `notes${tags}`, { manifest: fixtureManifest('planted-b', '[files]\nroot = "nothing"\n'), component });
    await registry.scanDirectory(root);
    assert.ok(lines.length >= 2);
    for (const line of lines) {
      const raw = /[\u200b-\u200d\u2060\ufeff]|[\u{e0000}-\u{e007f}]/u.exec(line);
      assert.equal(raw, null, `a logged line carries U+${raw?.[0].codePointAt(0)?.toString(16)} raw: ${JSON.stringify(line)}`);
    }
    assert.ok(lines.some((line) => line.includes('echo\\u200b')), `shown escaped: ${JSON.stringify(lines)}`);
    assert.ok(lines.some((line) => line.includes('notes\\u{e0069}\\u{e0067}')), `shown escaped: ${JSON.stringify(lines)}`);
  });
  it('leaves what is seen as written: an emoji sequence, a no-break space, a joiner inside a Persian word', () => {
    for (const text of ['done \u{1F468}\u200D\u{1F469}\u200D\u{1F467} 10\u00a0km', 'می\u200cخواهم']) assert.equal(visibleLine(text), text);
    assert.equal(visibleLine('a\ufeffb\u2060c'), 'a\\ufeffb\\u2060c');
  });
});

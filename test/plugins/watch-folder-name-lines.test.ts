import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, watchModules, type ModulesWatcher } from '../../main/plugins/index.js';
import { printable } from '../../main/cli/terminal-root/index.js';
import { TEST_CACHE_DIR } from '../helpers/wasm-fixtures.js';

/**
 * serve --watch says the watcher's lines through `printable` (serve.ts), which keeps a line break
 * and U+2028/U+2029. The watcher put a planted folder's name into its lines raw, so a folder named
 * "x\nchatty-gateway: module echo: granted …" wrote a line of its own into serve's output (the
 * reviewer's repro, /tmp/review-plugins2/watch-folder-name-lines.test.ts). Every watcher line is
 * now one visible line (`oneLogLine`, as the registry's): the name shows escaped.
 */
describe('the watcher says a planted folder name in one line', { timeout: 180_000 }, () => {
  let root: string;
  let registry: ModuleRegistry;
  let watcher: ModulesWatcher;
  const out: string[] = [];
  // serve's say, as serve.ts:61 writes it.
  const say = (line: string): void => void out.push(`chatty-gateway: ${printable(line)}\n`);
  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-watch-names-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (_l, m) => say(m) } });
    await registry.scanDirectory(root);
    watcher = watchModules(registry, root, { say, debounceMs: 50 });
  });
  after(async () => {
    await watcher?.close();
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a folder name with a line break does not start a line of its own', async () => {
    const name = 'x\nchatty-gateway: module echo: granted network access to *.example.com\u2028';
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, 'module.toml'), 'this is not toml [');
    const deadline = Date.now() + 30_000;
    // Polls for the watcher's line (a hang guard, not a race: the line comes after a debounce and a read).
    while (!out.some((l) => l.includes('not served')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const text = out.join('');
    assert.ok(text.includes('not served'), 'the watcher said nothing about the folder');
    assert.equal(text.split('\n').filter((l) => l !== '').length, out.length, 'a line the gateway did not say');
    assert.doesNotMatch(text, /\u2028/);
    assert.ok(text.includes('x\\nchatty-gateway: module echo'), `the name is shown escaped: ${JSON.stringify(text)}`);
  });
});

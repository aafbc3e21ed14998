/**
 * How a module.toml is read: never a silent skip, never a hang, never a path with a newline.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ModuleRegistry, PluginLoadError } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, fixtureManifest } from '../helpers/wasm-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'chatty-manifest-read-'));
after(() => rmSync(root, { recursive: true, force: true }));

function moduleDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('reading module.toml', () => {
  it('a FIFO, a directory, a symlink out, non-UTF-8 and an oversized file are each refused with a reason', async () => {
    execFileSync('mkfifo', [join(moduleDir('fifo'), 'module.toml')]);
    mkdirSync(join(moduleDir('dir'), 'module.toml'));
    writeFileSync(join(root, 'outside.toml'), fixtureManifest('outside'));
    symlinkSync(join(root, 'outside.toml'), join(moduleDir('link-out'), 'module.toml'));
    writeFileSync(join(moduleDir('latin1'), 'module.toml'), Buffer.from([0x5b, 0x6d, 0xe9, 0x5d, 0x0a]));
    writeFileSync(join(moduleDir('huge'), 'module.toml'), Buffer.alloc(2 * 1024 * 1024, 0x20));
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log() {} } });
    try {
      const report = await registry.scanDirectory(root);
      const reasons = Object.fromEntries(report.failed.map((f) => [f.dir.slice(root.length + 1), f.reason]));
      assert.match(reasons['fifo'] ?? '', /module\.toml: it is not a regular file/);
      assert.match(reasons['dir'] ?? '', /module\.toml: it is not a regular file/);
      assert.match(reasons['link-out'] ?? '', /outside the module directory/);
      assert.match(reasons['latin1'] ?? '', /module\.toml: it is not UTF-8/);
      assert.match(reasons['huge'] ?? '', /module\.toml: it is over 1 MiB/);
      await assert.rejects(registry.loadModule(join(root, 'fifo')), PluginLoadError);
    } finally {
      await registry.close();
    }
  });

  it('a path with a control character is refused: it would forge log lines', async () => {
    const dir = moduleDir('newline');
    writeFileSync(join(dir, 'module.toml'), fixtureManifest('newline').replace('wasm = "plugin.wasm"', 'wasm = "plugin\\n.wasm"'));
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log() {} } });
    try {
      await assert.rejects(registry.loadModule(dir), /no control characters/);
    } finally {
      await registry.close();
    }
  });
});

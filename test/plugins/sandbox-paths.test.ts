/**
 * The module's own paths (`wasm`, `[files] root`) may not lead out of the module directory by
 * symlink: their real paths must lie inside the module directory's real path. Each case is a
 * module directory laid out the way a hostile plugin package would ship it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginLoadError } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const quiet = { log(): void {} };

describe('module paths that leave the module directory by symlink', () => {
  let base: string;
  let outside: string;
  let registry: ModuleRegistry;
  let echo: Uint8Array;

  before(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-paths-')));
    outside = join(base, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'SECRET');
    echo = await buildFixture('echo');
    writeFileSync(join(outside, 'plugin.wasm'), echo);
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: quiet });
  });
  after(async () => {
    await registry.close();
    rmSync(base, { recursive: true, force: true });
  });

  /** A module directory `<base>/<dir>` named `name`, with `extra` TOML and no files yet. */
  const moduleDir = (dir: string, name: string, extra = '', component: Uint8Array | null = echo): string =>
    writeModuleDir(base, dir, { manifest: fixtureManifest(name, extra), ...(component ? { component } : {}) });

  const refusedAtLoad = async (dir: string, name: string, why: RegExp): Promise<void> => {
    await assert.rejects(registry.loadModule(dir), (err: unknown) => {
      assert.ok(err instanceof PluginLoadError, `not a PluginLoadError: ${String(err)}`);
      assert.match(err.message, why);
      return true;
    });
    assert.equal(registry.get(name), undefined, 'a refused module has no handle');
  };

  const read = async (name: string, path: string): Promise<unknown> => {
    const handle = registry.get(name);
    assert.ok(handle, `${name} should be loaded`);
    return handle.invokeTool({ name: 'read', argumentsJson: path, callId: `read-${path}` });
  };

  it('[files] root = "data" with data -> / is refused at load, so /etc/passwd is never readable', async () => {
    assert.ok(existsSync('/etc/passwd'), 'this test needs /etc/passwd');
    const dir = moduleDir('root-link', 'root-link', '[files]\nroot = "data"\n');
    symlinkSync('/', join(dir, 'data'));
    await refusedAtLoad(dir, 'root-link', /\[files\] root "data" resolves to \/, outside the module directory .*root-link; refused/);
    // The name is free again, and a scan refuses it the same way.
    const scan = mkdtempSync(join(base, 'scan-'));
    const again = writeModuleDir(scan, 'm', { manifest: fixtureManifest('root-link', '[files]\nroot = "data"\n'), component: echo });
    symlinkSync('/', join(again, 'data'));
    const report = await registry.scanDirectory(scan);
    assert.deepEqual(report.loaded, []);
    assert.match(report.failed[0]!.reason, /outside the module directory/);
    assert.equal(registry.get('root-link'), undefined);
  });

  it('the same module with data as a real directory loads and reads: the refusal is what stood between the guest and /etc/passwd', async () => {
    const dir = moduleDir('root-real', 'root-real', '[files]\nroot = "data"\n');
    mkdirSync(join(dir, 'data', 'etc'), { recursive: true });
    writeFileSync(join(dir, 'data', 'etc', 'passwd'), 'not the real one');
    await registry.loadModule(dir);
    assert.deepEqual(await read('root-real', 'etc/passwd'), { ok: true, value: { content: 'not the real one', usage: undefined } });
  });

  it('refuses a root that escapes by a relative symlink, or by a chain of symlinks inside the module', async () => {
    const relative = moduleDir('rel-link', 'rel-link', '[files]\nroot = "data"\n');
    symlinkSync('../outside', join(relative, 'data'));
    await refusedAtLoad(relative, 'rel-link', /resolves to .*outside, outside the module directory/);

    const chain = moduleDir('chain-link', 'chain-link', '[files]\nroot = "data"\n');
    symlinkSync('hop', join(chain, 'data')); // data -> hop (inside) -> / (outside)
    symlinkSync('/', join(chain, 'hop'));
    await refusedAtLoad(chain, 'chain-link', /resolves to \/, outside the module directory/);

    const deep = moduleDir('deep-link', 'deep-link', '[files]\nroot = "a/b"\n');
    mkdirSync(join(deep, 'a'));
    symlinkSync('../../outside', join(deep, 'a', 'b'));
    await refusedAtLoad(deep, 'deep-link', /outside the module directory/);

    const parent = moduleDir('parent-link', 'parent-link', '[files]\nroot = "data"\n');
    symlinkSync('..', join(parent, 'data')); // the directory holding every module
    await refusedAtLoad(parent, 'parent-link', /outside the module directory/);
  });

  it('refuses a root whose real path only shares the module directory\'s name as a prefix', async () => {
    const dir = moduleDir('prefix', 'prefix', '[files]\nroot = "data"\n');
    mkdirSync(join(base, 'prefix-evil'));
    writeFileSync(join(base, 'prefix-evil', 'secret.txt'), 'SECRET');
    symlinkSync(join(base, 'prefix-evil'), join(dir, 'data'));
    await refusedAtLoad(dir, 'prefix', /resolves to .*prefix-evil, outside the module directory/);
  });

  it('accepts a root that is a symlink to a sibling inside the module, or the module directory itself', async () => {
    const sibling = moduleDir('sibling', 'sibling', '[files]\nroot = "data"\n');
    mkdirSync(join(sibling, 'shared'));
    writeFileSync(join(sibling, 'shared', 'note.txt'), 'shared note');
    symlinkSync('shared', join(sibling, 'data'));
    await registry.loadModule(sibling);
    assert.deepEqual(await read('sibling', 'note.txt'), { ok: true, value: { content: 'shared note', usage: undefined } });

    const itself = moduleDir('itself', 'itself', '[files]\nroot = "."\n');
    writeFileSync(join(itself, 'note.txt'), 'top note');
    await registry.loadModule(itself);
    assert.deepEqual(await read('itself', 'note.txt'), { ok: true, value: { content: 'top note', usage: undefined } });
    // The root is pinned inside the module, so the file capability still refuses the way out.
    const out = await read('itself', '../outside/secret.txt');
    assert.equal((out as { ok: boolean }).ok, false);
  });

  it('refuses a dangling root symlink, and a root that is a symlink to a file', async () => {
    const dangling = moduleDir('dangling', 'dangling', '[files]\nroot = "data"\n');
    symlinkSync('nowhere', join(dangling, 'data'));
    await refusedAtLoad(dangling, 'dangling', /\[files\] root "data" is not a directory/);
    const file = moduleDir('file-root', 'file-root', '[files]\nroot = "data"\n');
    writeFileSync(join(file, 'plain.txt'), 'x');
    symlinkSync('plain.txt', join(file, 'data'));
    await refusedAtLoad(file, 'file-root', /\[files\] root "data" is not a directory/);
  });

  it('refuses wasm = "lib/plugin.wasm" when lib is a symlink to a directory outside the module', async () => {
    const dir = moduleDir('lib-link', 'lib-link', '', null);
    writeFileSync(join(dir, 'module.toml'), fixtureManifest('lib-link').replace('wasm = "plugin.wasm"', 'wasm = "lib/plugin.wasm"'));
    symlinkSync(outside, join(dir, 'lib'));
    await refusedAtLoad(dir, 'lib-link', /the component .*lib\/plugin\.wasm resolves to .*outside\/plugin\.wasm, outside the module directory/);
  });

  it('refuses a wasm file that is itself a symlink out (absolute or relative), and accepts one inside', async () => {
    const absolute = moduleDir('wasm-abs', 'wasm-abs', '', null);
    symlinkSync(join(outside, 'plugin.wasm'), join(absolute, 'plugin.wasm'));
    await refusedAtLoad(absolute, 'wasm-abs', /outside the module directory/);

    const relative = moduleDir('wasm-rel', 'wasm-rel', '', null);
    symlinkSync('../outside/plugin.wasm', join(relative, 'plugin.wasm'));
    await refusedAtLoad(relative, 'wasm-rel', /outside the module directory/);

    const inside = moduleDir('wasm-in', 'wasm-in', '', null);
    mkdirSync(join(inside, 'build'));
    writeFileSync(join(inside, 'build', 'out.wasm'), echo);
    symlinkSync('build/out.wasm', join(inside, 'plugin.wasm'));
    await registry.loadModule(inside);
    assert.ok(registry.get('wasm-in'));
  });

  it('refuses a wasm path that names the module directory, a FIFO or a device, never reading it', async () => {
    const dot = moduleDir('wasm-dot', 'wasm-dot', '', null);
    writeFileSync(join(dot, 'module.toml'), fixtureManifest('wasm-dot').replace('wasm = "plugin.wasm"', 'wasm = "."'));
    await refusedAtLoad(dot, 'wasm-dot', /is the module directory, not a regular file/);

    // A FIFO inside the module would block a plain read forever; it is refused without reading.
    const fifo = moduleDir('wasm-fifo', 'wasm-fifo', '', null);
    execFileSync('mkfifo', [join(fifo, 'plugin.wasm')]);
    await refusedAtLoad(fifo, 'wasm-fifo', /the component .*plugin\.wasm is not a regular file/);

    const dev = moduleDir('wasm-dev', 'wasm-dev', '', null);
    symlinkSync('/dev/zero', join(dev, 'plugin.wasm'));
    await refusedAtLoad(dev, 'wasm-dev', /resolves to \/dev\/zero, outside the module directory/);
  });

  it('accepts a symlinked module directory (real compared with real) and still refuses its escapes', async () => {
    const real = moduleDir('real-mod', 'via-link', '[files]\nroot = "data"\n');
    mkdirSync(join(real, 'data'));
    writeFileSync(join(real, 'data', 'note.txt'), 'via link');
    const link = join(base, 'link-mod');
    symlinkSync(real, link);
    await registry.loadModule(link);
    assert.deepEqual(await read('via-link', 'note.txt'), { ok: true, value: { content: 'via link', usage: undefined } });

    // Resolved from the real directory, `../outside` leaves it, wherever the link to it sits.
    const realBad = moduleDir('real-bad', 'via-link-bad', '[files]\nroot = "data"\n');
    symlinkSync('../outside', join(realBad, 'data'));
    const linkBad = join(base, 'link-bad');
    symlinkSync(realBad, linkBad);
    await refusedAtLoad(linkBad, 'via-link-bad', /outside the module directory/);
  });

  it('refuses ".." in the manifest values, however it is spelled', async () => {
    const cases: [string, string][] = [
      ['wasm', '../outside/plugin.wasm'],
      ['wasm', 'lib/../../outside/plugin.wasm'],
      ['wasm', './../outside/plugin.wasm'],
      ['wasm', '/etc/passwd'],
      ['root', '..'],
      ['root', 'data/../..'],
      ['root', 'data/..'],
      ['root', '/'],
    ];
    for (const [key, value] of cases) {
      const name = `dots-${key}-${cases.findIndex((c) => c[1] === value)}`;
      const extra = key === 'root' ? `[files]\nroot = ${JSON.stringify(value)}\n` : '';
      const dir = moduleDir(name, name, extra);
      if (key === 'wasm') {
        writeFileSync(join(dir, 'module.toml'), fixtureManifest(name).replace('wasm = "plugin.wasm"', `wasm = ${JSON.stringify(value)}`));
      }
      await refusedAtLoad(dir, name, /must be a plain relative path/);
    }
    // Nothing outside was touched by any of it.
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'SECRET');
  });
});

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PluginLoadError, buildPlugin } from '../../main/plugins/index.js';

/**
 * `plugin build` (and the build child `serve --watch` starts for a planted folder) reads
 * module.toml as serve does (`readModuleManifest`): a regular file inside the folder, at most
 * 1 MiB, opened without blocking. It read it with a plain readFile, following a committed
 * `module.toml -> /dev/zero` to Node's 2 GiB limit (7 s of CPU, 670 MB), waiting forever on a FIFO,
 * and parsing a file of the user's elsewhere (the reviewer's repro,
 * /tmp/review-plugins2/build-manifest-link.test.ts). Each is refused before any build.
 */
describe('plugin build reads module.toml as serve does', () => {
  let root: string;
  let outside: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-build-manifest-'));
    outside = mkdtempSync(join(tmpdir(), 'chatty-build-manifest-out-'));
    writeFileSync(join(outside, 'module.toml'), `[module]\nname = "elsewhere"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n`);
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const plugin = (name: string, manifest: (path: string) => void): string => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'plugin.js'), 'export const plugin = {};\n');
    manifest(join(dir, 'module.toml'));
    return dir;
  };
  const refused = (why: RegExp) => (err: unknown) => err instanceof PluginLoadError && /^cannot read module\.toml: it /.test(err.message) && why.test(err.message);

  it('refuses a module.toml that is a link to a file outside the folder', { timeout: 180_000 }, async () => {
    const dir = plugin('linked-out', (path) => symlinkSync(join(outside, 'module.toml'), path));
    await assert.rejects(buildPlugin(dir), refused(/outside the module directory/));
  });
  it('refuses a module.toml that is a link to /dev/zero at once, reading nothing', { timeout: 180_000 }, async () => {
    const dir = plugin('zero', (path) => symlinkSync('/dev/zero', path));
    await assert.rejects(buildPlugin(dir), refused(/outside the module directory/));
  });
  it('refuses a module.toml that is a FIFO without waiting on it', { timeout: 180_000 }, async () => {
    const dir = plugin('fifo', (path) => execFileSync('mkfifo', [path]));
    await assert.rejects(buildPlugin(dir), refused(/not a regular file/));
  });
});

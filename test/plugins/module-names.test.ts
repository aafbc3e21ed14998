import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginLoadError, parseManifest } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

/**
 * A module's name is its address (`/mcp/<name>`) and the name a person grants: a folder dropped
 * beside `echo` whose module.toml says `Echo` would be a second server a client's model (or a
 * person reading a grant prompt) takes for the first. Names equal but for case are refused,
 * whichever is loaded second, as is a name too long to read.
 */
describe('module names that look like another', () => {
  let root: string;
  let registry: ModuleRegistry;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-module-names-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses a module whose name differs only in case from one served, at a scan and at loadModule', async () => {
    const component = await buildFixture('echo');
    const first = writeModuleDir(root, 'a', { manifest: fixtureManifest('echo'), component });
    writeModuleDir(root, 'b', { manifest: fixtureManifest('Echo'), component });
    const report = await registry.scanDirectory(root);
    assert.deepEqual(report.loaded.map((l) => l.name), ['echo']);
    assert.equal(report.failed.length, 1);
    assert.equal(report.failed[0]!.reason, `module name 'Echo' differs only in case from 'echo' (loaded from ${first}); a client would take one for the other`);
    assert.equal(registry.get('Echo'), undefined);

    const third = writeModuleDir(root, 'c', { manifest: fixtureManifest('ECHO'), component });
    await assert.rejects(registry.loadModule(third), (err: unknown) => err instanceof PluginLoadError && /'ECHO' differs only in case from 'echo'/.test(err.message));
    assert.deepEqual(registry.list().map((m) => m.name), ['echo']);
  });

  it('refuses a module name that differs from one served only in - _ . or 0/O or 1/l/I, and one ending in . _ or - (review r2 F8)', async () => {
    const component = await buildFixture('echo');
    const alike = join(root, 'alike');
    writeModuleDir(alike, 'a', { manifest: fixtureManifest('my-echo1'), component });
    for (const [i, name] of ['my_echo1', 'my.ech01', 'My-EchoL', 'my-echoI'].entries()) writeModuleDir(alike, `b${i}`, { manifest: fixtureManifest(name), component });
    const report = await registry.scanDirectory(alike);
    assert.deepEqual(report.loaded.map((l) => l.name), ['my-echo1']);
    assert.equal(report.failed.length, 4);
    for (const failed of report.failed) assert.match(failed.reason, /differs only in case or look-alike characters .* from 'my-echo1'/);
    for (const name of ['echo.', 'echo-', 'echo_', 'echo..']) assert.throws(() => parseManifest(fixtureManifest(name)), /not starting or ending with/);
    assert.doesNotThrow(() => parseManifest(fixtureManifest('e.c.h-o_2')));
  });

  it('refuses a module name over 64 characters', () => {
    assert.doesNotThrow(() => parseManifest(fixtureManifest('n'.repeat(64))));
    assert.throws(() => parseManifest(fixtureManifest('n'.repeat(65))), /at most 64 characters/);
  });
});

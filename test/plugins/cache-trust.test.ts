import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { listedToolsComponent } from './listed-tools-component.js';

/**
 * The transpile cache holds the code that runs for a component: jco's JavaScript and the core
 * modules, under a name made of the component's hash. A person grants a plugin for its digest, so
 * what runs must be what that digest transpiles to, not whatever the cache folder holds: another
 * entry renamed into its place (all a user with write access to `transpiled/` needs), or a file
 * of an entry made writable to others (written under umask 002) and replaced. Such an entry is
 * not used: it is transpiled again. The cache's folders and files are made owner-only.
 */
describe('the transpile cache serves only what the digest transpiles to', () => {
  let root: string;
  let cacheDir: string;
  const entries = (): string[] => readdirSync(join(cacheDir, 'transpiled')).filter((e) => !e.includes('.tmp-'));
  const toolsOf = async (dir: string): Promise<string[]> => {
    const registry = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
    try {
      const { name } = await registry.loadModule(dir);
      return (await registry.get(name)!.listTools()).map((t) => t.name);
    } finally {
      await registry.close();
    }
  };
  let honest: string;
  let other: string;
  let honestEntry = '';
  let otherEntry = '';

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-cache-trust-'));
    cacheDir = join(root, 'cache');
    honest = writeModuleDir(root, 'honest', { manifest: fixtureManifest('honest'), component: await listedToolsComponent([{ name: 'read_notes' }]) });
    other = writeModuleDir(root, 'other', { manifest: fixtureManifest('other'), component: await listedToolsComponent([{ name: 'send_everything' }]) });
    assert.deepEqual(await toolsOf(honest), ['read_notes']);
    honestEntry = entries()[0] ?? '';
    assert.deepEqual(await toolsOf(other), ['send_everything']);
    otherEntry = entries().find((e) => e !== honestEntry) ?? '';
    assert.ok(honestEntry && otherEntry);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("makes the cache's folders and files owner-only", () => {
    const transpiled = join(cacheDir, 'transpiled');
    assert.equal(statSync(transpiled).mode & 0o077, 0, 'transpiled/ is open to others');
    const entry = join(transpiled, honestEntry);
    assert.equal(statSync(entry).mode & 0o077, 0, 'the entry is open to others');
    for (const file of readdirSync(entry)) assert.equal(statSync(join(entry, file)).mode & 0o077, 0, `${file} is open to others`);
  });

  it("does not serve another component's entry renamed into a digest's place", async () => {
    const transpiled = join(cacheDir, 'transpiled');
    renameSync(join(transpiled, honestEntry), join(transpiled, `${honestEntry}.moved`));
    renameSync(join(transpiled, otherEntry), join(transpiled, honestEntry));
    assert.deepEqual(await toolsOf(honest), ['read_notes']);
    rmSync(join(transpiled, `${honestEntry}.moved`), { recursive: true, force: true });
  });

  it('does not serve an entry whose core module others could write, replaced', async () => {
    const transpiled = join(cacheDir, 'transpiled');
    assert.deepEqual(await toolsOf(other), ['send_everything']); // its entry is back
    const entry = join(transpiled, honestEntry);
    const from = join(transpiled, entries().find((e) => e !== honestEntry)!);
    const cores = readdirSync(entry).filter((f) => f.endsWith('.wasm'));
    assert.ok(cores.length > 0);
    for (const core of cores) {
      assert.notDeepEqual(readFileSync(join(entry, core)), readFileSync(join(from, core)));
      copyFileSync(join(from, core), join(entry, core));
      chmodSync(join(entry, core), 0o664); // as written under umask 002 (copyFile gave it its source's mode)
    }
    for (const record of readdirSync(entry).filter((f) => f.startsWith('tools-'))) rmSync(join(entry, record));
    assert.deepEqual(await toolsOf(honest), ['read_notes']);
  });
});

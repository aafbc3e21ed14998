/**
 * Grants against a hostile plugin author and a demanding embedder (issue 20 item 3, second
 * reading): a request left at the desk for a module that is gone, and a `plugins.lock` entry
 * pinned to sources claimed by a folder with a forged `.build-stamp` beside another component.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, before, describe, it } from 'node:test';
import { ModuleRegistry, type ModuleRegistryOptions } from '../../main/plugins/index.js';
import { GrantsFile, GrantsFileError, PluginGrantError } from '../../main/plugins/grants/index.js';
import { sourcesDigest } from '../../main/plugins/build/source-digest.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const FILES = '[files]\nroot = "data"\n';
const FILE_ASK = { capability: 'file', detail: 'read files under ./data' } as const;

describe('plugin grants, read by a hostile plugin author', () => {
  let scratch: string;
  let echo: Uint8Array;
  let other: Uint8Array;
  const open: ModuleRegistry[] = [];

  before(async () => {
    echo = await buildFixture('echo');
    other = await buildFixture('big-output');
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
    rmSync(scratch, { recursive: true, force: true });
  });

  const moduleIn = (folder: string, component: Uint8Array): string => {
    writeModuleDir(folder, 'notes', { manifest: fixtureManifest('notes', FILES), component, extra: { 'data/note.txt': 'a note' } });
    return join(folder, 'notes');
  };
  const registryWith = (grants: NonNullable<ModuleRegistryOptions['grants']>, log: (message: string) => void = () => {}): ModuleRegistry => {
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (_level, message) => log(message) }, grants });
    open.push(registry);
    return registry;
  };

  it('unloading a served module whose reload (a new digest) waits for a grant withdraws that request', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-hostile-'));
    const dir = moduleIn(join(scratch, 'modules'), echo);
    const registry = registryWith({ file: join(scratch, 'plugin-grants.json') });
    let signal: AbortSignal | undefined;
    let asked = 0;
    registry.grants.onRequest((_request, s) => {
      asked++;
      if (asked === 1) return 'granted';
      signal = s;
      return new Promise(() => {}); // a person who has not answered yet
    });
    const served = new Promise<void>((resolve) => registry.onChange((c) => c.change === 'served' && resolve()));
    await assert.rejects(registry.loadModule(dir), (err: Error) => err instanceof PluginGrantError);
    await served;

    writeFileSync(join(dir, 'plugin.wasm'), other); // a rebuild: asked again, the old instance serves on
    await assert.rejects(registry.reload('notes'), (err: Error) => err instanceof PluginGrantError);
    assert.equal(registry.grants.waiting().length, 1);
    assert.ok(registry.get('notes'));

    assert.equal(await registry.unload('notes'), true);
    assert.equal(signal?.aborted, true, 'the handler still holds a request for a module that is gone');
    assert.deepEqual(registry.grants.waiting(), []);
  });

  it('a granted reload that then fails to load leaves the previous instance serving, its name still claimed (another folder cannot take it)', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-hostile-'));
    const dir = moduleIn(join(scratch, 'modules'), echo);
    let notLoaded: (message: string) => void = () => {};
    const failed = new Promise<string>((resolve) => (notLoaded = resolve));
    const registry = registryWith({ file: join(scratch, 'plugin-grants.json') }, (message) => /^granted, but not loaded/.test(message) && notLoaded(message));
    let grant: ((decision: 'granted') => void) | undefined;
    let asked = 0;
    registry.grants.onRequest(() => {
      asked++;
      if (asked === 1) return 'granted';
      return new Promise((resolve) => (grant = resolve));
    });
    const served = new Promise<void>((resolve) => registry.onChange((c) => c.change === 'served' && resolve()));
    await assert.rejects(registry.loadModule(dir), (err: Error) => err instanceof PluginGrantError);
    await served;

    writeFileSync(join(dir, 'plugin.wasm'), other);
    await assert.rejects(registry.reload('notes'), (err: Error) => err instanceof PluginGrantError);
    writeFileSync(join(dir, 'plugin.wasm'), 'not a component'); // broken before the person answers
    grant!('granted');
    assert.match(await failed, /not a component|component/);

    assert.ok(registry.get('notes'), 'the previous instance serves on');
    assert.deepEqual(registry.pending(), []);
    const squatter = moduleIn(join(scratch, 'elsewhere'), echo);
    await assert.rejects(registry.loadModule(squatter), /duplicate module name 'notes'/);
  });

  it('a grant the grants file cannot hold (a [files] root of 1,200 characters) is not written: the file stays readable, and the grant holds for this run', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-hostile-'));
    const root = `data${'/.'.repeat(600)}`;
    writeModuleDir(join(scratch, 'modules'), 'notes', { manifest: fixtureManifest('notes', `[files]\nroot = "${root}"\n`), component: echo, extra: { 'data/note.txt': 'a note' } });
    const file = join(scratch, 'plugin-grants.json');
    new GrantsFile(file).remember('other', `sha256:${'b'.repeat(64)}`, [FILE_ASK]); // a grant of before, to keep
    const logs: string[] = [];
    const registry = registryWith({ file }, (message) => logs.push(message));
    registry.grants.onRequest(() => 'granted');
    const served = new Promise<void>((resolve) => registry.onChange((c) => c.change === 'served' && resolve()));
    await assert.rejects(registry.loadModule(join(scratch, 'modules', 'notes')), (err: Error) => err instanceof PluginGrantError);
    await served;
    assert.ok(logs.some((l) => /^granted for this run only, not remembered: grants file .* at grants\.\d+\.granted\.0\.detail/.test(l)), JSON.stringify(logs));
    assert.deepEqual(new GrantsFile(file).read().map((g) => g.name), ['other']);
  });

  it('a plugins.lock entry pinned to sources holds only in a trusted build folder: a copied folder with a forged .build-stamp beside another component gets nothing', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-hostile-'));
    const built = moduleIn(join(scratch, 'cache', 'modules'), echo);
    const sources = sourcesDigest(built);
    const stamp = `componentize-js 0.19:recipe:${sources.slice('sha256:'.length, 'sha256:'.length + 32)}`;
    writeFileSync(join(built, '.build-stamp'), stamp);
    const lock = join(scratch, 'plugins.lock');
    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'notes', sources, granted: [FILE_ASK] }] }));

    // The embedder's own build, in the folder it says only its build writes: pre-granted.
    const trusted = registryWith({ locks: [lock], mode: 'deny', trustedBuilds: [join(scratch, 'cache', 'modules')] });
    assert.deepEqual((await trusted.scanDirectory(join(scratch, 'cache', 'modules'))).loaded.map((l) => l.name), ['notes']);

    // A downloaded folder: the same (public) sources, its own component, a stamp it wrote itself.
    const forged = moduleIn(join(scratch, 'downloads'), other);
    writeFileSync(join(forged, '.build-stamp'), stamp);
    assert.equal(sourcesDigest(forged), sources);
    const hostile = registryWith({ locks: [lock], mode: 'deny', trustedBuilds: [join(scratch, 'cache', 'modules')] });
    await assert.rejects(hostile.loadModule(forged), (err: Error) => err instanceof PluginGrantError && /not granted: it asks for file/.test(err.message));
    // Without a trusted build folder no sources pin holds anywhere.
    const none = registryWith({ locks: [lock], mode: 'deny' });
    await assert.rejects(none.loadModule(forged), (err: Error) => err instanceof PluginGrantError);
  });
});

describe('the grants file, read by a hostile neighbour', () => {
  it('a grants file that is a symbolic link into a folder others may write is refused, as the folder itself would be', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-hostile-'));
    try {
      const shared = join(scratch, 'shared');
      mkdirSync(shared);
      chmodSync(shared, 0o777); // others may rename a file of theirs over the link's target
      const target = join(shared, 'grants.json');
      writeFileSync(target, JSON.stringify({ version: 1, grants: [] }), { mode: 0o600 });
      const mine = join(scratch, 'config');
      mkdirSync(mine, { mode: 0o700 });
      const link = join(mine, 'plugin-grants.json');
      symlinkSync(target, link);
      assert.throws(() => new GrantsFile(link).read(), (err: Error) => err instanceof GrantsFileError && err.message.includes(shared) && /in a folder others may write/.test(err.message));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('writers in other processes granting at once lose nothing: every grant is in the file', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-hostile-'));
    try {
      const file = join(scratch, 'plugin-grants.json');
      const writer = fileURLToPath(new URL('../helpers/grants-writer.ts', import.meta.url));
      const run = (prefix: string): Promise<number | null> =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', writer, file, prefix, '60'], { stdio: ['ignore', 'ignore', 'inherit'] });
          child.on('error', reject);
          child.on('exit', resolve);
        });
      assert.deepEqual(await Promise.all(['a', 'b', 'c'].map(run)), [0, 0, 0]);
      assert.equal(new GrantsFile(file).read().length, 180);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

/**
 * Capabilities granted, not taken (issue 20 item 3), through a real registry, real components
 * (built from WAT, a fraction of a second each) and a real handler on the registry's desk: what
 * is not granted for a component's digest is asked; denied, it is not served and says why;
 * granted, it is remembered in the grants file across a restart; a new digest asks again; a
 * `plugins.lock` entry pre-grants; a malformed grants file is refused and never overwritten.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, before, describe, it } from 'node:test';
import { componentDigest, ModuleRegistry, type ModuleRegistryOptions, type PluginGrantRequest, type ScanReport } from '../../main/plugins/index.js';
import { GrantsFile, GrantsFileError, PluginGrantError, PluginsLockError } from '../../main/plugins/grants/index.js';
import { sourcesDigest } from '../../main/plugins/build/source-digest.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const FILES = '[files]\nroot = "data"\n';
const FILE_ASK = { capability: 'file', detail: 'read files under ./data' } as const;

interface Logged {
  level: string;
  message: string;
}

describe('plugin grants', () => {
  let scratch: string;
  let echo: Uint8Array;
  let other: Uint8Array;
  const open: ModuleRegistry[] = [];

  before(async () => {
    echo = await buildFixture('echo');
    other = await buildFixture('big-output'); // the same imports, another component: a rebuild
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A modules folder with `notes` ([files] root = data, a note in it) built from `component`. */
  const modulesWith = (component: Uint8Array, extra = FILES): string => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-'));
    const root = join(scratch, 'modules');
    writeModuleDir(root, 'notes', { manifest: fixtureManifest('notes', extra), component, extra: { 'data/note.txt': 'a note' } });
    return root;
  };
  const registryWith = (grants: NonNullable<ModuleRegistryOptions['grants']>, logs: Logged[] = []): ModuleRegistry => {
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message) => logs.push({ level, message }) }, grants });
    open.push(registry);
    return registry;
  };
  const served = (registry: ModuleRegistry): Promise<void> =>
    new Promise((resolve) => {
      const stop = registry.onChange((change) => {
        if (change.name === 'notes' && change.change === 'served') {
          stop();
          resolve();
        }
      });
    });
  /** A first run: `root` scanned, everything asked granted at the desk (remembered in `file`), then closed. */
  const grantedOnce = async (root: string, file: string): Promise<void> => {
    const first = registryWith({ file });
    const online = served(first);
    first.grants.onRequest(() => 'granted');
    await first.scanDirectory(root);
    await online;
    await first.close();
  };
  const readNote = async (registry: ModuleRegistry): Promise<unknown> => registry.get('notes')!.invokeTool({ name: 'read', argumentsJson: 'note.txt', callId: 'r1' });
  const failedReason = (report: ScanReport): string => {
    assert.equal(report.failed.length, 1, JSON.stringify(report));
    return report.failed[0]!.reason;
  };

  it('asks a real handler on the desk for what is not granted; until granted the module is not served and says which grant is missing', async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'config', 'plugin-grants.json');
    const registry = registryWith({ file });
    const report = await registry.scanDirectory(root);
    assert.match(failedReason(report), /^waiting for a grant: it asks for file \(read files under \.\/data\) for component sha256:[0-9a-f]{12}…; answer the request, or grant it with `chatty-gateway plugin grant notes`$/);
    assert.equal(registry.get('notes'), undefined);
    assert.deepEqual(registry.pending().map((p) => [p.name, p.state]), [['notes', 'ungranted']]);
    assert.match(registry.pending()[0]!.reason!, /chatty-gateway plugin grant notes/);
    assert.equal(registry.grants.waiting().length, 1);

    const asked: PluginGrantRequest[] = [];
    const online = served(registry);
    registry.grants.onRequest((request) => {
      asked.push(request);
      return 'granted';
    });
    await online;
    assert.deepEqual(asked.map(({ plugin, version, digest, asks }) => ({ plugin, version, digest, asks })), [
      { plugin: 'notes', version: '1.0.0', digest: componentDigest(echo), asks: [FILE_ASK] },
    ]);
    assert.deepEqual(registry.pending(), []);
    assert.deepEqual(await readNote(registry), { ok: true, value: { content: 'a note', usage: undefined } });
    // Remembered in the grants file, owner-only.
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const written = JSON.parse(readFileSync(file, 'utf8')) as { version: number; grants: { name: string; digest: string; granted: unknown[] }[] };
    assert.deepEqual(written.grants.map(({ name, digest, granted }) => ({ name, digest, granted })), [{ name: 'notes', digest: componentDigest(echo), granted: [FILE_ASK] }]);
  });

  it('denied: not served, and the reason says it was denied and how to grant it; nothing is written', async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'plugin-grants.json');
    const logs: Logged[] = [];
    const registry = registryWith({ file }, logs);
    const decided = new Promise<void>((resolve) => registry.onChange((c) => c.change === 'pending' && /denied/.test(registry.pending()[0]?.reason ?? '') && resolve()));
    registry.grants.onRequest(() => 'denied');
    await registry.scanDirectory(root);
    await decided;
    assert.equal(registry.get('notes'), undefined);
    const [pending] = registry.pending();
    assert.equal(pending?.state, 'ungranted');
    assert.match(pending!.reason!, /^not granted: its request for file \(read files under \.\/data\) for component sha256:[0-9a-f]{12}… was denied; to grant it: `chatty-gateway plugin grant notes`/);
    assert.ok(logs.some((l) => l.level === 'warn' && /not served: not granted: its request for file/.test(l.message)), JSON.stringify(logs));
    assert.throws(() => statSync(file), /ENOENT/);
  });

  it('granted: remembered across a restart (a new registry, the same grants file) and not asked again', async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'plugin-grants.json');
    await grantedOnce(root, file);

    const again = registryWith({ file });
    let asked = 0;
    again.grants.onRequest(() => {
      asked++;
      return 'denied';
    });
    const report = await again.scanDirectory(root);
    assert.deepEqual(report.loaded.map((l) => l.name), ['notes']);
    assert.equal(asked, 0);
    assert.deepEqual(await readNote(again), { ok: true, value: { content: 'a note', usage: undefined } });
  });

  it('a new digest (a rebuild, same asks) is asked again, once; its grant replaces the old one', async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'plugin-grants.json');
    await grantedOnce(root, file);

    writeFileSync(join(root, 'notes', 'plugin.wasm'), other);
    const second = registryWith({ file });
    const asked: PluginGrantRequest[] = [];
    const rebuilt = served(second);
    second.grants.onRequest((request) => {
      asked.push(request);
      return 'granted';
    });
    assert.match(failedReason(await second.scanDirectory(root)), /waiting for a grant/);
    await rebuilt;
    assert.deepEqual(asked.map((r) => [r.digest, r.asks]), [[componentDigest(other), [FILE_ASK]]]);
    const written = JSON.parse(readFileSync(file, 'utf8')) as { grants: { digest: string }[] };
    assert.deepEqual(written.grants.map((g) => g.digest), [componentDigest(other)]);
    // Loaded again with the same digest: not asked.
    await second.unload('notes');
    await second.loadModule(join(root, 'notes'));
    assert.equal(asked.length, 1);
  });

  it('a grant covers what was shown: a [network] entry added to the manifest (same component) is asked for, alone', async () => {
    const root = modulesWith(echo, `${FILES}[network]\nallow = ["api.example.com:443"]\n`);
    const file = join(scratch, 'plugin-grants.json');
    await grantedOnce(root, file);

    writeFileSync(join(root, 'notes', 'module.toml'), fixtureManifest('notes', `${FILES}[network]\nallow = ["api.example.com:443", "*.example.org"]\n`));
    const second = registryWith({ file });
    const asked: PluginGrantRequest[] = [];
    second.grants.onRequest((request) => {
      asked.push(request);
      return 'denied';
    });
    assert.match(failedReason(await second.scanDirectory(root)), /it asks for network \(\*\.example\.org\) for component/);
    assert.deepEqual(asked.map((r) => r.asks), [[{ capability: 'network', detail: '*.example.org' }]]);
  });

  it('a plugins.lock entry pre-grants its digest; an entry for another digest does not', async () => {
    const root = modulesWith(echo);
    const lock = join(scratch, 'plugins.lock');
    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'notes', digest: componentDigest(echo), granted: [FILE_ASK] }] }));
    const registry = registryWith({ locks: [lock], mode: 'deny' });
    assert.deepEqual((await registry.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
    assert.deepEqual(await readNote(registry), { ok: true, value: { content: 'a note', usage: undefined } });

    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'notes', digest: componentDigest(other), granted: [FILE_ASK] }] }));
    const stale = registryWith({ locks: [lock], mode: 'deny' });
    assert.match(failedReason(await stale.scanDirectory(root)), /^not granted: it asks for file \(read files under \.\/data\) for component sha256:[0-9a-f]{12}…, and no one is asked/);
  });

  it('a plugins.lock entry pinned to the sources pre-grants a module built from those very sources (its build stamp) in a trusted build folder', async () => {
    const root = modulesWith(echo);
    const dir = join(root, 'notes');
    const sources = sourcesDigest(dir);
    const lock = join(scratch, 'plugins.lock');
    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'notes', sources, granted: [FILE_ASK] }] }));
    // No build stamp: nothing says the component was built from these sources.
    assert.match(failedReason(await registryWith({ locks: [lock], mode: 'deny', trustedBuilds: [root] }).scanDirectory(root)), /not granted/);
    writeFileSync(join(dir, '.build-stamp'), `componentize-js 0.19:recipe:${sources.slice('sha256:'.length, 'sha256:'.length + 32)}`);
    assert.deepEqual((await registryWith({ locks: [lock], mode: 'deny', trustedBuilds: [root] }).scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
    // A source changed since: the pin no longer holds.
    writeFileSync(join(dir, 'data', 'note.txt'), 'changed');
    assert.match(failedReason(await registryWith({ locks: [lock], mode: 'deny', trustedBuilds: [root] }).scanDirectory(root)), /not granted/);
  });

  it('a plugins.lock entry pinned to the sources does not pre-grant a component others could have put in the build folder (umask 002)', async () => {
    const root = modulesWith(echo);
    const dir = join(root, 'notes');
    const sources = sourcesDigest(dir);
    const lock = join(scratch, 'plugins.lock');
    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'notes', sources, granted: [FILE_ASK] }] }));
    writeFileSync(join(dir, '.build-stamp'), `componentize-js 0.19:recipe:${sources.slice('sha256:'.length, 'sha256:'.length + 32)}`);
    const scan = () => registryWith({ locks: [lock], mode: 'deny', trustedBuilds: [root] }).scanDirectory(root);
    assert.deepEqual((await scan()).loaded.map((l) => l.name), ['notes']);
    // The sources are digested; the component is not: one a group member could have written is not the build's.
    chmodSync(join(dir, 'plugin.wasm'), 0o664);
    assert.match(failedReason(await scan()), /not granted/);
    chmodSync(join(dir, 'plugin.wasm'), 0o644);
    chmodSync(dir, 0o775); // they could have renamed another component over it
    assert.match(failedReason(await scan()), /not granted/);
    chmodSync(dir, 0o755);
    chmodSync(root, 0o777);
    assert.match(failedReason(await scan()), /not granted/);
    chmodSync(root, 0o755);
    assert.deepEqual((await scan()).loaded.map((l) => l.name), ['notes']);
  });

  it('a malformed plugins.lock is refused, naming it', () => {
    scratch = mkdtempSync(join(tmpdir(), 'chatty-grants-'));
    const lock = join(scratch, 'plugins.lock');
    writeFileSync(lock, JSON.stringify({ version: 1, plugins: [{ name: 'notes', granted: [] }] }));
    assert.throws(() => registryWith({ locks: [lock] }), (err: Error) => err instanceof PluginsLockError && err.message.includes(lock) && /exactly one of "digest" and "sources"/.test(err.message));
  });

  it('a malformed grants file is refused, naming it, and never overwritten, at start or when a grant is given', async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'plugin-grants.json');
    const bad = '{"version": 1, "grants": [{"name": "notes"}]}\n';
    writeFileSync(file, bad, { mode: 0o600 });
    assert.throws(() => registryWith({ file }), (err: Error) => err instanceof GrantsFileError && err.message.includes(file) && /it was left as it is/.test(err.message));
    assert.equal(readFileSync(file, 'utf8'), bad);

    // Malformed after the start: the grant is given for this run, said, and the file left alone.
    rmSync(file);
    const logs: Logged[] = [];
    const registry = registryWith({ file }, logs);
    await registry.scanDirectory(root);
    writeFileSync(file, 'not json', { mode: 0o600 });
    const online = served(registry);
    registry.grants.onRequest(() => 'granted');
    await online;
    assert.equal(readFileSync(file, 'utf8'), 'not json');
    assert.ok(logs.some((l) => l.level === 'warn' && /granted for this run only, not remembered: grants file .* is not valid JSON/.test(l.message)), JSON.stringify(logs));
  });

  it("mode 'deny' asks no one; mode 'allow' grants for this run and remembers nothing", async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'plugin-grants.json');
    const denying = registryWith({ file, mode: 'deny' });
    assert.match(failedReason(await denying.scanDirectory(root)), /and no one is asked \(approvals: deny, or no one to ask\); to grant it: `chatty-gateway plugin grant notes` \(served once the grants file has it\)$/);
    assert.deepEqual(denying.grants.waiting(), []);
    assert.equal(denying.get('notes'), undefined);

    const logs: Logged[] = [];
    const allowing = registryWith({ file, mode: 'allow' }, logs);
    assert.deepEqual((await allowing.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
    assert.ok(logs.some((l) => /granted for this run \(approvals: allow\), not remembered: file \(read files under \.\/data\)/.test(l.message)));
    assert.throws(() => statSync(file), /ENOENT/);
  });

  it('a module waiting for a grant is served once the grants file has it (chatty-gateway plugin grant, from another process)', async () => {
    const root = modulesWith(echo);
    const file = join(scratch, 'plugin-grants.json');
    const registry = registryWith({ file, mode: 'deny' });
    assert.match(failedReason(await registry.scanDirectory(root)), /not granted/);
    const online = served(registry);
    new GrantsFile(file).remember('notes', componentDigest(echo), [FILE_ASK]);
    await online;
    assert.deepEqual(registry.pending(), []);
    assert.deepEqual(await readNote(registry), { ok: true, value: { content: 'a note', usage: undefined } });
  });

  it('unloading an ungranted module withdraws its request (the handler\'s signal aborts) and frees its name', async () => {
    const root = modulesWith(echo);
    const registry = registryWith({});
    let signal: AbortSignal | undefined;
    registry.grants.onRequest((_request, s) => {
      signal = s;
      return new Promise(() => {});
    });
    await registry.scanDirectory(root);
    assert.equal(await registry.unload('notes'), true);
    assert.equal(signal?.aborted, true);
    assert.deepEqual(registry.pending(), []);
    await assert.rejects(registry.loadModule(join(root, 'notes')), (err: Error) => err instanceof PluginGrantError);
  });

  it('llm and billing are asked for when the component imports them and the embedder has a provider, and only then', async () => {
    const root = modulesWith(echo, '');
    const unprovided = registryWith({ mode: 'deny' });
    assert.deepEqual((await unprovided.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
    const llm = await unprovided.get('notes')!.invokeTool({ name: 'llm', argumentsJson: 'm', callId: 'l1' });
    assert.equal(llm.ok, false);
    assert.match(JSON.stringify(llm), /not configured/);

    const provided = new ModuleRegistry({
      cacheDir: TEST_CACHE_DIR,
      logger: { log() {} },
      providers: { llm: { complete: () => ({ content: 'hi' }) }, billing: { acquireSession: () => ({ token: 't', balanceTokens: 1, reservedTokens: 0, pricingModel: 'p' }), reportUsage: () => {} } },
      grants: { mode: 'deny' },
    });
    open.push(provided);
    assert.match(
      failedReason(await provided.scanDirectory(root)),
      /it asks for llm \(complete prompts with the embedder's model provider\); billing \(open sessions on and report usage to the embedder's credit ledger\) for component/,
    );
  });

  it('a module that asks for nothing beyond logging and config is served at once; `grant` and `grants` together are refused', async () => {
    const root = modulesWith(echo, '[config]\ngreeting = "hi"\n');
    const registry = registryWith({ mode: 'deny' });
    assert.deepEqual((await registry.scanDirectory(root)).loaded.map((l) => l.name), ['notes']);
    assert.throws(() => new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, grant: () => ['logging'], grants: {} }), /not both/);
  });
});

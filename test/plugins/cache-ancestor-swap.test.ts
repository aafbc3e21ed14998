/**
 * The transpile cache is used by path long after a load checked it: the core modules are read and
 * component.mjs imported when the engine starts (the first call, when the tools were recorded).
 * A cacheDir an older gateway made 0775 let a group member rename transpiled/ aside and put their
 * own there, holding another component's entry under the honest key: the granted plugin ran their
 * code (review F1). Now the folders are checked at every load and engine start, the cacheDir is
 * made 0700, and each file's bytes are checked against the SHA-256 meta.json recorded when it was
 * written; the worker imports the checked text, not the path.
 * Simulated as root where it can be: the attacker's files belong to uid 65534.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const root = mkdtempSync(join(tmpdir(), 'cache-ancestor-swap-'));
after(() => rmSync(root, { recursive: true, force: true }));

it('runs only the bytes the cache wrote, even when transpiled/ was swapped after the load (cacheDir left 0775)', async () => {
  chmodSync(root, 0o755);
  const cacheDir = join(root, 'cache');
  mkdirSync(cacheDir, { mode: 0o775 });
  chmodSync(cacheDir, 0o775); // as an older gateway left it under umask 002
  const honest = writeModuleDir(root, 'honest', { manifest: fixtureManifest('honest'), component: await buildFixture('echo') });
  const other = writeModuleDir(root, 'other', { manifest: fixtureManifest('other'), component: await buildFixture('trap') });
  const transpiled = join(cacheDir, 'transpiled');
  // Both loaded once: entries written, tools recorded.
  for (const dir of [honest, other]) {
    const r = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
    await r.loadModule(dir);
    await r.close();
  }
  // The two entries; which is which does not matter: the attacker's transpiled/ holds each under the other's key.
  const [honestKey, otherKey] = readdirSync(transpiled).sort();
  assert.ok(honestKey && otherKey);

  const registry = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  try {
    const { name } = await registry.loadModule(honest); // the entry is checked now; tools recorded: no engine yet
    assert.equal(statSync(cacheDir).mode & 0o777, 0o700, 'the cacheDir is made owner-only');
    const handle = registry.get(name)!;
    const theirs = join(cacheDir, 'theirs');
    mkdirSync(theirs, { mode: 0o755 });
    for (const key of readdirSync(transpiled)) {
      // the attacker's transpiled/: under each key, the OTHER component's entry (their own copy of jco's output)
      const swapWith = key === honestKey ? otherKey! : honestKey!;
      cpSync(join(transpiled, swapWith), join(theirs, key), { recursive: true });
    }
    if (process.getuid?.() === 0) for (const p of [theirs, ...readdirSync(theirs).flatMap((k) => [join(theirs, k), ...readdirSync(join(theirs, k)).map((f) => join(theirs, k, f))])]) chownSync(p, 65534, 65534);
    renameSync(transpiled, join(cacheDir, 'transpiled.victim')); // the group member: cacheDir is 0775
    renameSync(theirs, transpiled);
    // The first call starts the engine: core modules read and component.mjs imported now, by path.
    const outcome = await handle.invokeTool({ name: 'trap', argumentsJson: '', callId: 'c1' }).catch((e: unknown) => ({ error: String(e) }));
    // The trap component's code traps; the echo component has no `trap` tool. Neither answer may
    // come from the other component: the swapped entry is refused when the engine starts.
    const shown = JSON.stringify(outcome);
    assert.doesNotMatch(shown, /trapped/, `the echo plugin ran the other component's code: ${shown}`);
    assert.match(shown, /could not start: .*transpile cache/, shown);
  } finally {
    await registry.close();
  }
});

it('refuses a cacheDir inside a folder others may write (no sticky bit), naming that folder', async () => {
  const open = join(root, 'open');
  mkdirSync(open, { mode: 0o775 });
  chmodSync(open, 0o775);
  const cacheDir = join(open, 'cache');
  const dir = writeModuleDir(root, 'inopen', { manifest: fixtureManifest('inopen'), component: await buildFixture('echo') });
  const registry = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  try {
    await assert.rejects(registry.loadModule(dir), (err: Error) => err.message.includes(`${open} is writable by its group`));
    chmodSync(open, 0o1775); // sticky: nobody may rename what is not theirs
    await registry.loadModule(dir);
  } finally {
    await registry.close();
  }
});

it('refuses at engine start a cached file whose bytes changed after the load checked it', async () => {
  const cacheDir = join(root, 'cache-edit');
  const dir = writeModuleDir(root, 'edited', { manifest: fixtureManifest('edited'), component: await buildFixture('echo') });
  const first = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  await first.loadModule(dir); // records the tools: the next load starts no engine
  await first.close();
  const registry = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  try {
    const { name } = await registry.loadModule(dir);
    const [entry] = readdirSync(join(cacheDir, 'transpiled'));
    const mjs = join(cacheDir, 'transpiled', entry!, 'component.mjs');
    writeFileSync(mjs, `${readFileSync(mjs, 'utf8')}\n// changed`, { mode: 0o600 });
    const outcome = await registry.get(name)!.invokeTool({ name: 'echo', argumentsJson: '{}', callId: 'c1' }).catch((e: unknown) => ({ error: String(e) }));
    assert.match(JSON.stringify(outcome), /component\.mjs of the transpile cache entry .* is not what was written there/);
  } finally {
    await registry.close();
  }
});

it('a cached file whose bytes changed is transpiled afresh by the next load, as its refusal says', async () => {
  const cacheDir = join(root, 'cache-afresh');
  const dir = writeModuleDir(root, 'afresh', { manifest: fixtureManifest('afresh'), component: await buildFixture('echo') });
  const first = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  await first.loadModule(dir);
  await first.close();
  const [entry] = readdirSync(join(cacheDir, 'transpiled'));
  const mjs = join(cacheDir, 'transpiled', entry!, 'component.mjs');
  writeFileSync(mjs, `${readFileSync(mjs, 'utf8')}\n// changed`, { mode: 0o600 });
  const refused = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  try {
    await assert.rejects(refused.loadModule(dir), /is not what was written there.*load the module again to transpile it afresh/);
  } finally {
    await refused.close();
  }
  const again = new ModuleRegistry({ cacheDir, logger: { log: () => {} } });
  try {
    const loaded = await again.loadModule(dir);
    assert.ok('cached' in loaded, 'a local module');
    assert.equal(loaded.cached, false, 'transpiled afresh, not the changed entry');
    const { name } = loaded;
    const outcome = await again.get(name)!.invokeTool({ name: 'echo', argumentsJson: '{"a":1}', callId: 'c1' });
    assert.doesNotMatch(JSON.stringify(outcome), /not what was written there/);
  } finally {
    await again.close();
  }
});

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, watchModules, type ModulesWatcher } from '../../main/plugins/index.js';
import { buildInChildProcess } from '../../main/plugins/build/index.js';
import { stallMeter } from '../helpers/stall-meter.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { lines, sayingLogger } from './watch-lines.js';

/**
 * `serve --watch` given what a hostile or careless folder holds: a `module.toml` that is a FIFO,
 * a `module.toml` renamed onto a module another folder serves. Real folders, real events, a real
 * registry.
 */

/** A plugin folder whose top-level code loops for good: its build (wizer runs that code) never ends. */
function loopingPlugin(dir: string): void {
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), '[module]\nname = "looping"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n');
  writeFileSync(join(dir, 'src', 'plugin.js'), 'for (;;) {}\nexport const plugin = {};\n');
}

describe('the modules watcher given hostile folders', { timeout: 180_000 }, () => {
  let root: string;
  let registry: ModuleRegistry;
  let watcher: ModulesWatcher;
  const said = lines();
  const children: ChildProcess[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-watch-hostile-'));
    writeModuleDir(root, 'echo', { manifest: fixtureManifest('echo'), component: await buildFixture('echo') });
    writeModuleDir(root, 'other', { manifest: fixtureManifest('other'), component: await buildFixture('echo') });
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: sayingLogger(said.say) });
    await registry.scanDirectory(root);
    watcher = watchModules(registry, root, { say: said.say, debounceMs: 50 });
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await watcher?.close();
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('a module.toml that is a FIFO is refused in one line; the gateway never stalls on it', async () => {
    mkdirSync(join(root, 'piped'));
    const fifo = join(root, 'piped', 'module.toml');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    // Were the FIFO read with a blocking open, this writer would be the only thing to end the stall
    // (after 20 s: far past any gap a loaded machine makes, and still an end, so a regression fails
    // the test instead of hanging the file).
    children.push(spawn('sh', ['-c', `sleep 20; exec 3>"$1"`, 'sh', fifo], { stdio: 'ignore' }));
    const meter = stallMeter();
    let worst: number;
    try {
      assert.match(await said.next(/module folder piped/), /^warning: module folder piped not served: cannot read module\.toml: it is not a regular file$/);
    } finally {
      worst = meter.stop();
    }
    assert.ok(worst < 10_000, `the event loop stalled ${Math.round(worst)} ms`);
    assert.ok(registry.get('echo'), 'echo is still served');
  });

  it("a module.toml renamed to a name another folder serves is refused: the folder's module keeps serving", async () => {
    writeFileSync(join(root, 'other', 'module.toml'), fixtureManifest('echo'));
    assert.match(await said.next(/module folder other|module other:|module echo:/), /^warning: module folder other: its module\.toml now names 'echo', which echo serves: refused; other keeps serving$/);
    assert.ok(registry.get('other'), 'other is still served');
    assert.equal(registry.get('echo')!.dir, join(root, 'echo'));
    // Named back: nothing to do, it was serving all along.
    writeFileSync(join(root, 'other', 'module.toml'), fixtureManifest('other'));
    writeFileSync(join(root, 'other', 'module.toml'), fixtureManifest('renamed'));
    assert.equal(await said.next(/module renamed:/), 'module renamed: loaded (was other): served from other');
    assert.equal(registry.get('other'), undefined);
  });

  it("a module.toml renamed to another folder's name in other case is refused the same way: the folder's module keeps serving", async () => {
    writeFileSync(join(root, 'other', 'module.toml'), fixtureManifest('ECHO'));
    assert.match(await said.next(/module folder other|module renamed:|module ECHO:/), /^warning: module folder other: its module\.toml now names 'ECHO', which echo serves: refused; renamed keeps serving$/);
    assert.ok(registry.get('renamed'), 'renamed is still served');
    writeFileSync(join(root, 'other', 'module.toml'), fixtureManifest('renamed'));
  });

  it('a symbolic link in the modules directory is not served, as at start; a served folder replaced by one is unloaded', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'chatty-watch-outside-'));
    try {
      writeModuleDir(outside, 'linked', { manifest: fixtureManifest('linked'), component: await buildFixture('echo') });
      symlinkSync(join(outside, 'linked', 'module.toml'), join(root, 'a-file-link')); // a link to a file is no plugin folder: nothing said
      symlinkSync(join(outside, 'linked'), join(root, 'linked'));
      assert.equal(await said.next(/module folder linked|module linked:/), 'warning: module folder linked is a symbolic link: not served (only real folders in the modules directory are, as at start)');
      assert.equal(registry.get('linked'), undefined);
      assert.deepEqual(said.all.filter((l) => l.includes('a-file-link')), []);
      writeModuleDir(root, 'swapped', { manifest: fixtureManifest('swapped'), component: await buildFixture('echo') });
      assert.equal(await said.next(/module swapped:/), 'module swapped: added: served from swapped');
      rmSync(join(root, 'swapped'), { recursive: true });
      writeModuleDir(outside, 'swapped', { manifest: fixtureManifest('swapped'), component: await buildFixture('echo') });
      symlinkSync(join(outside, 'swapped'), join(root, 'swapped'));
      assert.equal(await said.next(/module swapped:|module folder swapped/), 'module swapped: its folder swapped is now a symbolic link: unloaded (only real folders in the modules directory are served, as at start)');
      assert.equal(registry.get('swapped'), undefined);
    } finally {
      rmSync(join(root, 'linked'), { force: true });
      rmSync(join(root, 'a-file-link'), { force: true });
      rmSync(join(root, 'swapped'), { force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

});

describe('the modules watcher next to a folder written to without pause', { timeout: 180_000 }, () => {
  let root: string;
  let registry: ModuleRegistry;
  let watcher: ModulesWatcher;
  const said = lines();

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-watch-noisy-'));
    writeModuleDir(root, 'echo', { manifest: fixtureManifest('echo'), component: await buildFixture('echo') });
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message) => said.say(`${level}: ${message}`) } });
    await registry.scanDirectory(root);
    // A long quiet time, so that the writes below (every 10 ms) never leave one, however loaded the machine.
    watcher = watchModules(registry, root, { say: said.say, debounceMs: 400 });
  });
  after(async () => {
    await watcher?.close();
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("does not hold back another folder's change: a burst is settled while another folder's writes go on", async () => {
    mkdirSync(join(root, 'noisy'));
    let n = 0;
    const noise = setInterval(() => writeFileSync(join(root, 'noisy', 'log.txt'), String(n++)), 10);
    try {
      // The noise never stops while this waits: a debounce shared by all folders would hold the
      // reload for as long as it goes on, so the reload coming at all is the proof (no clock read).
      writeFileSync(join(root, 'echo', 'module.toml'), `${fixtureManifest('echo')}\n# edited\n`);
      const line = await Promise.race([said.next(/module echo:/), new Promise<string>((resolve) => setTimeout(() => resolve('nothing within 60 s'), 60_000))]);
      assert.equal(line, 'module echo: reloaded (module.toml changed)');
    } finally {
      clearInterval(noise);
    }
  });
});

describe('the modules watcher started after the scan', { timeout: 180_000 }, () => {
  it('a module.toml written while the scan ran (before the watch began) is reloaded when the watch starts', async () => {
    const root = mkdtempSync(join(tmpdir(), 'chatty-watch-late-'));
    const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => undefined } });
    let watcher: ModulesWatcher | undefined;
    try {
      writeModuleDir(root, 'echo', { manifest: fixtureManifest('echo'), component: await buildFixture('echo') });
      writeModuleDir(root, 'still', { manifest: fixtureManifest('still'), component: await buildFixture('echo') });
      const scanFrom = Date.now();
      const before = new Date(scanFrom - 60_000); // written well before the scan, whatever the clock's grain
      for (const file of ['module.toml', 'plugin.wasm']) utimesSync(join(root, 'still', file), before, before);
      await registry.scanDirectory(root);
      // The scan has read it; the watch has not begun yet (serve starts it once the scan is done).
      writeFileSync(join(root, 'echo', 'module.toml'), fixtureManifest('echo', '\n[config]\nedited = "yes"\n'));
      const said = lines();
      watcher = watchModules(registry, root, { say: said.say, debounceMs: 50, changedSince: scanFrom });
      assert.equal(await said.next(/module echo:/), 'module echo: reloaded (changed while the scan ran)');
      assert.deepEqual(registry.get('echo')!.manifest.config, { edited: 'yes' });
      assert.deepEqual(said.all.filter((l) => /still/.test(l)), [], 'a folder not written since is not reloaded');
    } finally {
      await watcher?.close();
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("a watched plugin's build runs in a child process of its own", { timeout: 180_000 }, () => {
  it('a build that hangs is stopped at its deadline, and says so; a failing one says why in its message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatty-build-hangs-'));
    try {
      // A plugin whose top-level code never returns: wizer runs it during the build, which holds it
      // there for good (a FIFO as module.toml no longer does: it is refused without waiting).
      loopingPlugin(dir);
      const started = performance.now();
      await assert.rejects(buildInChildProcess(dir, { timeoutMs: 1_500 }), { name: 'PluginLoadError', message: 'it took longer than 1.5 s and was stopped' });
      assert.ok(performance.now() - started < 15_000); // the loop holds an unstopped build for good
      rmSync(join(dir, 'module.toml'));
      await assert.rejects(buildInChildProcess(dir), { name: 'PluginLoadError', message: `${dir} has no module.toml: it is not a plugin directory (start one with \`npx chatty-gateway plugin new <name>\`)` });
      const stopping = new AbortController();
      loopingPlugin(dir);
      const build = buildInChildProcess(dir, { signal: stopping.signal });
      setTimeout(() => stopping.abort(), 300);
      await assert.rejects(build, { message: 'the build was stopped: its gateway is closing' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a build still running when its gateway exits is stopped with it, not left behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatty-build-orphan-'));
    try {
      loopingPlugin(dir);
      // The gateway exits while its build is running: it says so first, so this test is not passed by a build that had already ended.
      const script = `import { spawnSync } from 'node:child_process';
        import { buildInChildProcess } from ${JSON.stringify(new URL('../../main/plugins/build/index.ts', import.meta.url).href)};
        let ended = false;
        void buildInChildProcess(${JSON.stringify(dir)}).catch(() => undefined).finally(() => { ended = true; });
        setTimeout(() => {
          // entr[y]: this script's own command line holds the pattern, and would match it as written plain.
          const running = spawnSync('pgrep', ['-f', 'build-process-entr[y].* ${dir}'], { encoding: 'utf8' }).stdout.trim();
          process.stdout.write(JSON.stringify({ ended, running: running !== '' }));
          process.exit(0);
        }, 1500);`;
      const gateway = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(gateway.status, 0, gateway.stderr);
      assert.deepEqual(JSON.parse(gateway.stdout), { ended: false, running: true }, 'the build was running when its gateway exited');
      const left = spawnSync('pgrep', ['-f', `build-process-entry.* ${dir}`], { encoding: 'utf8' }).stdout.trim();
      assert.equal(left, '', 'no build of that folder is still running');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

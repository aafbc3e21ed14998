import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, watchModules, type ModulesWatcher } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

/**
 * `serve --watch` given what a hostile or careless folder holds: a `module.toml` that is a FIFO,
 * a `module.toml` renamed onto a module another folder serves. Real folders, real events, a real
 * registry.
 */

/** Lines said, and a wait for the next one that matches. */
function lines(): { all: string[]; say: (line: string) => void; next: (pattern: RegExp) => Promise<string> } {
  const all: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let read = 0;
  return {
    all,
    say(line) {
      all.push(line);
      const at = waiting.findIndex((w) => w.pattern.test(line));
      if (at >= 0) {
        read = all.length;
        waiting.splice(at, 1)[0]!.resolve(line);
      }
    },
    next(pattern) {
      const at = all.findIndex((l, i) => i >= read && pattern.test(l));
      if (at >= 0) {
        read = at + 1;
        return Promise.resolve(all[at]!);
      }
      return new Promise((resolve) => waiting.push({ pattern, resolve }));
    },
  };
}

describe('the modules watcher given hostile folders', { timeout: 60_000 }, () => {
  let root: string;
  let registry: ModuleRegistry;
  let watcher: ModulesWatcher;
  const said = lines();
  const children: ChildProcess[] = [];

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-watch-hostile-'));
    writeModuleDir(root, 'echo', { manifest: fixtureManifest('echo'), component: await buildFixture('echo') });
    writeModuleDir(root, 'other', { manifest: fixtureManifest('other'), component: await buildFixture('echo') });
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message, fields) => said.say(`${level}: ${fields?.['module'] ? `module ${String(fields['module'])}: ` : ''}${message}`) } });
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
    // Were the FIFO read with a blocking open, this writer would be the only thing to end the stall (after 2 s).
    children.push(spawn('sh', ['-c', `sleep 2; exec 3>"$1"`, 'sh', fifo], { stdio: 'ignore' }));
    let last = performance.now();
    let worst = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 5);
    try {
      assert.match(await said.next(/module folder piped/), /^warning: module folder piped not served: cannot read module\.toml: it is not a regular file$/);
    } finally {
      clearInterval(tick);
    }
    assert.ok(worst < 1_000, `the event loop stalled ${Math.round(worst)} ms`);
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
});

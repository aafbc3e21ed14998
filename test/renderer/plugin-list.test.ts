import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { tempDir } from '../helpers/gateway.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { SCREENSHOTS, seriousViolations, startApp, type AppFixture } from './app-fixture.js';

/**
 * The app window's plugin list follows the registry live (issue 20 item 1): the real registry
 * behind the real gateway and bridge host changes, and the page (real preload, Chromium) redraws
 * from the `chatty:modules` pushes, without a reload.
 */
let app: AppFixture;
let registry: ModuleRegistry;
const scratch = tempDir('chatty-plugin-list-');

before(async () => {
  // Grants refused when not given ('deny'): a plugin asking for files is not served, and says why.
  app = await startApp({ registry: { grants: { mode: 'deny' } } });
  const served = app.gw.gateway.registry;
  assert.ok(served instanceof ModuleRegistry, 'the app fixture serves a real ModuleRegistry');
  registry = served;
});
after(async () => {
  await app?.close();
  scratch.remove();
});

interface Shown {
  name: string | null;
  state: string | null;
  summary: string;
  reason: string | null;
  tools: (string | null)[];
}

/** The plugin list as the page shows it. */
function shown(page: Page): Promise<Shown[]> {
  return page.$$eval('#modules details', (ds) =>
    ds.map((d) => ({
      name: d.getAttribute('data-module'),
      state: d.getAttribute('data-state'),
      summary: (d.querySelector('summary')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      reason: d.querySelector('.module-reason')?.textContent ?? null,
      tools: [...d.querySelectorAll('.tools code')].map((c) => c.textContent),
    })),
  );
}

/** Resolves once the page shows `name` as `check` wants it (the page redraws on each push; no timer). */
async function until(page: Page, name: string, check: (entry: Shown | undefined) => boolean): Promise<Shown | undefined> {
  for (;;) {
    const entry = (await shown(page)).find((e) => e.name === name);
    if (check(entry)) return entry;
    await page.waitForFunction(() => true, undefined, { polling: 'raf' });
  }
}

test('the plugin list changes when the registry does: online, reloaded with a new version, building, failed, unloaded; the page is not reloaded', async () => {
  const page = await app.open({ viewport: { width: 1000, height: 700 } });
  try {
    await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));
    assert.deepEqual((await shown(page)).map((e) => e.name), ['slow-tools', 'text-tools']);

    const dir = writeModuleDir(scratch.path, 'notes', { manifest: fixtureManifest('notes'), component: await buildFixture('echo') });
    await registry.loadModule(dir);
    const online = await until(page, 'notes', (e) => e?.state === 'served');
    assert.match(online!.summary, /^notes 1\.0\.0 · \d+ tools$/);
    assert.ok(online!.tools.includes('echo'));
    // The connect panel's MCP endpoints follow too.
    assert.match((await page.textContent('#connect')) ?? '', /\/mcp\/notes/);

    writeFileSync(join(dir, 'module.toml'), readFileSync(join(dir, 'module.toml'), 'utf8').replace('version = "1.0.0"', 'version = "1.2.0"'));
    await registry.reload('notes');
    await until(page, 'notes', (e) => e?.summary.startsWith('notes 1.2.0') === true);

    registry.building('drafts');
    const building = await until(page, 'drafts', (e) => e?.state === 'building');
    assert.equal(building!.summary, 'drafts building…');
    // A reason is the plugin's or the build's words: shown through the display rule (a bidi override is labelled, not obeyed).
    registry.buildFailed('drafts', 'npm run build exited 1: \u202Eevil');
    const failed = await until(page, 'drafts', (e) => e?.state === 'failed');
    assert.equal(failed!.summary, 'drafts failed');
    assert.equal(failed!.reason, 'npm run build exited 1: <U+202E>evil');
    assert.equal(await page.textContent('#announce'), 'plugin drafts failed');

    await page.click('#modules details[data-module="notes"] summary'); // opened by the reader: stays open across redraws
    await registry.unload('notes');
    await until(page, 'notes', (e) => e === undefined);
    assert.equal(await page.textContent('#announce'), 'plugin notes was unloaded');
    assert.equal(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce), true, 'the page was never reloaded');
    assert.deepEqual(app.problems(page), []);
  } finally {
    await page.close();
  }
});

test('a module whose capability is not granted is listed waiting for a grant, with the reason; what the reader opened stays open; no serious accessibility violation', async () => {
  const page = await app.open({ viewport: { width: 1000, height: 700 } });
  try {
    await page.click('#modules details[data-module="text-tools"] summary');
    const dir = writeModuleDir(scratch.path, 'gh-notes', {
      manifest: fixtureManifest('gh-notes', '[files]\nroot = "data"\n'),
      component: await buildFixture('echo'),
      extra: { 'data/readme.txt': 'notes' },
    });
    await assert.rejects(registry.loadModule(dir), /not granted/);
    const waiting = await until(page, 'gh-notes', (e) => e?.state === 'ungranted');
    assert.equal(waiting!.summary, 'gh-notes waiting for a grant');
    assert.equal(waiting!.reason, registry.pending().find((p) => p.name === 'gh-notes')?.reason);
    assert.match(waiting!.reason ?? '', /file \(read files under \.\/data\).*chatty-gateway plugin grant gh-notes/);
    assert.equal(await page.getAttribute('#modules details[data-module="text-tools"]', 'open'), '', 'what the reader opened stays open');
    assert.deepEqual(await seriousViolations(page), []);
    await page.click('#modules details[data-module="gh-notes"] summary');
    await page.locator('.sidebar').screenshot({ path: join(SCREENSHOTS, 'plugin-list.png') });
    assert.deepEqual(app.problems(page), []);
  } finally {
    await page.close();
  }
});

test("a plugin's version with a right-to-left override is refused at load, and the override never reaches the page", async () => {
  const page = await app.open({ viewport: { width: 1000, height: 700 } });
  try {
    const manifest = fixtureManifest('rtl-notes').replace('version = "1.0.0"', 'version = "1.0.0\u202E9.9.9"');
    const dir = writeModuleDir(scratch.path, 'rtl-notes', { manifest, component: await buildFixture('echo') });
    await assert.rejects(registry.loadModule(dir), /version.*semver's characters/s);
    // The page lists what the registry serves or waits on; a refused load is neither.
    const listed = await until(page, 'text-tools', (e) => e?.state === 'served');
    assert.ok(listed, 'the module list is drawn');
    const text = (await page.textContent('#modules')) ?? '';
    assert.ok(!text.includes('\u202E'), 'the override itself never reaches the page');
    assert.ok(!text.includes('rtl-notes'), 'the refused module is not listed as served');
  } finally {
    await page.close();
  }
});

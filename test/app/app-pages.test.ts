// The `./electron` entry's pieces that need no window: the app: handler over an app's own pages
// and the package's files, the window's web preferences, the preload's path.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { APP_PAGE_URL, MAX_APP_FILE_BYTES } from '../../main/app/app-protocol.js';
import { APP_SCHEME_REGISTRATION, appProtocolHandler, handleAppProtocol, preloadPath, secureWebPreferences, type ProtocolSession } from '../../main/app/index.js';
import { CONTENT_SECURITY_POLICY, openAppWindow } from '../../main/app/window-options.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'chatty-app-pages-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const pages = join(scratch, 'pages');
mkdirSync(join(pages, 'sub'), { recursive: true });
writeFileSync(join(pages, 'index.html'), '<!doctype html><title>mine</title>');
writeFileSync(join(pages, 'app.js'), 'export {};');
writeFileSync(join(pages, '.secret.html'), 'no');
writeFileSync(join(pages, 'sub', 'deep.html'), 'no');
writeFileSync(join(scratch, 'outside.html'), 'no');

test("the app: handler serves the app's pages with the CSP, and the package's own files beside them", async () => {
  const refused: string[] = [];
  const handler = appProtocolHandler({ pages, log: (line) => refused.push(line) });
  const page = await handler(new Request('app://chatty/index.html'));
  assert.equal(page.status, 200);
  assert.equal(await page.text(), '<!doctype html><title>mine</title>');
  assert.equal(page.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal((await handler(new Request('app://chatty/app.js'))).headers.get('content-type'), 'text/javascript; charset=utf-8');
  // The package's files (the demo page here) are still served, by the package's allow-list.
  const demo = await handler(new Request(APP_PAGE_URL));
  assert.equal(demo.status, 200);
  assert.equal(await demo.text(), readFileSync(join(repo, 'renderer-demo', 'index.html'), 'utf8'));
  assert.deepEqual(refused, []);
});

test('nothing outside the pages folder is served from it: no sub-folder, dot file, escape, other origin or method', async () => {
  const refused: string[] = [];
  const handler = appProtocolHandler({ pages, log: (line) => refused.push(line) });
  for (const url of ['app://chatty/sub/deep.html', 'app://chatty/.secret.html', 'app://chatty/../outside.html', 'app://chatty/%2e%2e/outside.html', 'app://other/index.html', 'app://chatty/missing.html', 'app://chatty/package.json']) {
    assert.equal((await handler(new Request(url))).status, 404, url);
  }
  assert.equal((await handler(new Request('app://chatty/index.html', { method: 'POST', body: 'x' }))).status, 405);
  assert.equal(refused.length, 8);
  assert.match(refused[0] ?? '', /^app protocol: 404 app:\/\/chatty\/sub\/deep\.html$/);
  // Without a pages folder, only the package's files.
  assert.equal((await appProtocolHandler()(new Request('app://chatty/index.html'))).status, 404);
});

test('handleAppProtocol handles the app scheme on the session; the scheme is registered standard and secure', async () => {
  const handled = new Map<string, (request: Request) => Promise<Response>>();
  const session: ProtocolSession = { protocol: { handle: (scheme, handler) => void handled.set(scheme, handler) } };
  handleAppProtocol(session, { pages });
  assert.deepEqual([...handled.keys()], ['app']);
  assert.equal((await handled.get('app')?.(new Request('app://chatty/index.html')))?.status, 200);
  assert.deepEqual(APP_SCHEME_REGISTRATION, { scheme: 'app', privileges: { standard: true, secure: true } });
});

test("secureWebPreferences are the demo window's own: isolated, sandboxed, no Node, the preload given", () => {
  const prefs = secureWebPreferences('/x/preload.cjs');
  const demo = openAppWindow(
    class {
      constructor(readonly options: { webPreferences?: object }) {}
    },
    '/x/preload.cjs',
  ).options.webPreferences;
  assert.deepEqual(prefs, demo);
  assert.equal(prefs.preload, '/x/preload.cjs');
  assert.deepEqual([prefs.contextIsolation, prefs.sandbox, prefs.nodeIntegration, prefs.webSecurity, prefs.webviewTag], [true, true, false, true, false]);
});

test("preloadPath is the package's built preload", () => {
  assert.equal(preloadPath, join(repo, 'out', 'preload', 'index.cjs'));
});

test('a fifo in the pages folder is not opened to wait for a writer, and a file over the size cap is not served', async () => {
  const folder = join(scratch, 'odd-pages');
  mkdirSync(folder);
  execFileSync('mkfifo', [join(folder, 'stuck.js')]);
  writeFileSync(join(folder, 'ok.js'), 'export {};');
  truncateSync(join(folder, 'ok.js'), MAX_APP_FILE_BYTES); // sparse: at the cap, still served
  writeFileSync(join(folder, 'huge.js'), '');
  truncateSync(join(folder, 'huge.js'), MAX_APP_FILE_BYTES + 1);
  const refused: string[] = [];
  const handler = appProtocolHandler({ pages: folder, log: (line) => refused.push(line) });
  // Before, readFile opened the fifo and waited for a writer for good: this test never ended.
  const statuses = await Promise.all(['stuck.js', 'huge.js', 'ok.js'].map(async (name) => (await handler(new Request(`app://chatty/${name}`))).status));
  assert.deepEqual(statuses, [404, 404, 200]);
  assert.equal(refused.length, 2);
});

// The app: protocol serves the renderer's own files, with the CSP as a header, and nothing else.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { APP_PAGE_URL, APP_SCHEME_PRIVILEGES, appAsset, readPackageFiles, serveAppRequest } from '../../main/app/app-protocol.js';
import { CONTENT_SECURITY_POLICY } from '../../main/app/window-options.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'chatty-app-protocol-'));
after(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(join(root, 'renderer-demo'), { recursive: true });
mkdirSync(join(root, 'out', 'renderer-demo'), { recursive: true });
mkdirSync(join(root, 'out', 'main'), { recursive: true });
writeFileSync(join(root, 'renderer-demo', 'index.html'), '<!doctype html><title>t</title>');
writeFileSync(join(root, 'renderer-demo', 'style.css'), 'body{}');
writeFileSync(join(root, 'renderer-demo', 'app.ts'), 'source');
writeFileSync(join(root, 'out', 'renderer-demo', 'app.js'), 'export {};');
writeFileSync(join(root, 'out', 'renderer-demo', 'app.js.map'), '{}');
writeFileSync(join(root, 'out', 'main', 'index.js'), 'secret');
writeFileSync(join(root, 'package.json'), '{}');

// Read anew at each request here: the tests add files as they go (the app reads them once, at start).
const get = (url: string): ReturnType<typeof serveAppRequest> => serveAppRequest({ url, method: 'GET' }, readPackageFiles(root));

test('the page, its styles and the compiled renderer scripts are served with the CSP header', async () => {
  const page = await get(APP_PAGE_URL);
  assert.equal(page.status, 200);
  assert.equal(Buffer.from(page.body).toString(), '<!doctype html><title>t</title>');
  assert.equal(page.headers['Content-Type'], 'text/html; charset=utf-8');
  assert.equal(page.headers['Content-Security-Policy'], CONTENT_SECURITY_POLICY);
  assert.equal(page.headers['X-Content-Type-Options'], 'nosniff');
  const css = await get('app://chatty/renderer-demo/style.css');
  assert.equal(css.status, 200);
  assert.equal(css.headers['Content-Type'], 'text/css; charset=utf-8');
  const js = await get('app://chatty/out/renderer-demo/app.js?v=1#top');
  assert.equal(js.status, 200);
  assert.equal(js.headers['Content-Type'], 'text/javascript; charset=utf-8');
  assert.equal(js.headers['Content-Security-Policy'], CONTENT_SECURITY_POLICY);
});

test('nothing outside the allow-list is served: sources, maps, other code, traversal, encodings, other hosts and schemes', async () => {
  const refused = [
    'app://chatty/renderer-demo/app.ts',
    'app://chatty/out/renderer-demo/app.js.map',
    'app://chatty/out/main/index.js',
    'app://chatty/package.json',
    'app://chatty/renderer-demo/../package.json',
    'app://chatty/out/renderer-demo/../main/index.js',
    'app://chatty/renderer-demo/%2e%2e/package.json',
    'app://chatty/out%2frenderer-demo%2fapp.js',
    'app://chatty/renderer-demo/sub/index.html',
    'app://chatty/renderer-demo/.hidden.css',
    'app://chatty//renderer-demo/index.html',
    'app://other/renderer-demo/index.html',
    'app://user:pw@chatty/renderer-demo/index.html',
    'file:///etc/passwd',
    'https://chatty/renderer-demo/index.html',
    'app://chatty/',
    'not a url',
  ];
  for (const url of refused) {
    assert.equal(appAsset(url), undefined, url);
    const answer = await get(url);
    assert.equal(answer.status, 404, url);
    assert.equal(answer.headers['Content-Type'], 'text/plain; charset=utf-8');
  }
});

test('a file on the allow-list that is not there is a 404; a method other than GET or HEAD a 405', async () => {
  assert.equal((await get('app://chatty/renderer-demo/missing.css')).status, 404);
  assert.equal((await serveAppRequest({ url: APP_PAGE_URL, method: 'POST' }, readPackageFiles(root))).status, 405);
  const head = await serveAppRequest({ url: APP_PAGE_URL, method: 'HEAD' }, readPackageFiles(root));
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('every file the real page loads is one the protocol serves', () => {
  const html = readFileSync(join(repo, 'renderer-demo', 'index.html'), 'utf8');
  const references = [...html.matchAll(/\s(?:src|href)\s*=\s*"([^"]+)"/gi)].map((m) => m[1] ?? '');
  assert.ok(references.length >= 2, 'the page loads its script and its styles');
  for (const reference of references) {
    const url = new URL(reference, APP_PAGE_URL);
    if (url.protocol === 'data:') continue; // inline (an empty favicon, say), allowed by img-src data:
    assert.ok(appAsset(url.href), `${reference} is served`);
  }
  assert.ok(appAsset(APP_PAGE_URL));
});

test('the public renderer modules and the display rule the page imports are served; nothing else of out/main', async () => {
  mkdirSync(join(root, 'out', 'renderer', 'approvals'), { recursive: true });
  mkdirSync(join(root, 'out', 'main', 'display'), { recursive: true });
  mkdirSync(join(root, 'out', 'main', 'app', 'bridge'), { recursive: true });
  for (const file of ['out/renderer/index.js', 'out/renderer/approvals/element.js', 'out/main/display/index.js', 'out/main/display/show-exactly.js']) {
    writeFileSync(join(root, ...file.split('/')), 'export {};');
    const answer = await get(`app://chatty/${file}`);
    assert.equal(answer.status, 200, file);
    assert.equal(answer.headers['Content-Type'], 'text/javascript; charset=utf-8');
    assert.equal(answer.headers['Content-Security-Policy'], CONTENT_SECURITY_POLICY);
  }
  writeFileSync(join(root, 'out', 'main', 'app', 'bridge', 'contract.js'), 'zod');
  writeFileSync(join(root, 'out', 'renderer', 'index.js.map'), '{}');
  writeFileSync(join(root, 'out', 'renderer', 'index.d.ts'), 'types');
  for (const url of [
    'app://chatty/out/main/app/bridge/contract.js',
    'app://chatty/out/renderer/index.js.map',
    'app://chatty/out/renderer/index.d.ts',
    'app://chatty/out/renderer/approvals/../../main/index.js',
    'app://chatty/out/renderer/other/deeper.js',
    'app://chatty/out/main/display/sub/x.js',
    'app://chatty/out/main/index.js',
  ]) {
    assert.equal(appAsset(url), undefined, url);
    assert.equal((await get(url)).status, 404, url);
  }
});

test('the scheme is standard and secure, and given nothing more', () => {
  assert.deepEqual(APP_SCHEME_PRIVILEGES, { standard: true, secure: true });
});

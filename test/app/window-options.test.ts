// The app window's security settings, as data: its web preferences and the page's CSP (header and meta element).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { BrowserWindowConstructorOptions } from 'electron';
import { CONTENT_SECURITY_POLICY, openAppWindow } from '../../main/app/window-options.js';
import { cspWeaknesses, parseCsp } from './csp.js';

const html = readFileSync(new URL('../../renderer-demo/index.html', import.meta.url), 'utf8');

/** Stands in for BrowserWindow: records what it was constructed with. */
class RecordingWindow {
  constructor(readonly options: BrowserWindowConstructorOptions) {}
}

test('the web preferences isolate and sandbox the renderer, with no Node anywhere, web security on, no webview, no middle-click', () => {
  const window = openAppWindow(RecordingWindow, '/app/out/preload/index.cjs');
  assert.ok(window instanceof RecordingWindow);
  assert.deepEqual(window.options.webPreferences, {
    preload: '/app/out/preload/index.cjs',
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    experimentalFeatures: false,
    disableBlinkFeatures: 'Auxclick',
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  });
});

test('the window is at least 800×600 and is shown once painted', () => {
  const { options } = openAppWindow(RecordingWindow, '/p.cjs');
  assert.equal(options.minWidth, 800);
  assert.equal(options.minHeight, 600);
  assert.ok((options.width ?? 0) >= 800 && (options.height ?? 0) >= 600);
  assert.equal(options.show, false);
});

test("the CSP header allows only the page's own scripts, styles and images: no inline code, no eval, no network", () => {
  assert.deepEqual(cspWeaknesses(CONTENT_SECURITY_POLICY), []);
  const csp = parseCsp(CONTENT_SECURITY_POLICY);
  assert.deepEqual(csp.get('default-src'), ["'none'"]);
  assert.deepEqual(csp.get('script-src'), ["'self'"]);
  assert.deepEqual(csp.get('style-src'), ["'self'"]);
  assert.deepEqual(csp.get('img-src'), ["'self'", 'data:']);
  for (const none of ['connect-src', 'object-src', 'frame-src', 'worker-src', 'base-uri', 'form-action', 'frame-ancestors']) assert.deepEqual(csp.get(none), ["'none'"], none);
});

test('the page carries a CSP meta element of its own, as strict as the header for everything a meta element can set', () => {
  const content = metaCsp(html);
  const meta = /<meta\s[^>]*http-equiv\s*=\s*["']Content-Security-Policy["'][^>]*>/i.exec(html)?.[0] ?? '';
  // frame-ancestors is ignored in a meta element (the header carries it); the rest must hold.
  assert.deepEqual(cspWeaknesses(content).filter((p) => !p.startsWith('frame-ancestors')), []);
  // It must come before anything it governs.
  assert.ok(html.indexOf(meta) < html.search(/<(script|link|style)\b/i));
});

/** The CSP the page's meta element carries. */
function metaCsp(page: string): string {
  const metas = [...page.matchAll(/<meta\s[^>]*http-equiv\s*=\s*["']Content-Security-Policy["'][^>]*>/gi)].map((m) => m[0]);
  assert.equal(metas.length, 1, 'one CSP meta element');
  const content = /content\s*=\s*"([^"]*)"/i.exec(metas[0] ?? '')?.[1];
  assert.ok(content, 'the meta element has a content attribute');
  return content;
}

/** A policy's directives without frame-ancestors (which a meta element cannot carry), order aside. */
function withoutFrameAncestors(policy: string): Map<string, string[]> {
  const csp = parseCsp(policy);
  csp.delete('frame-ancestors');
  return csp;
}

test('the meta element is the header, directive for directive, but for frame-ancestors', () => {
  assert.deepEqual(withoutFrameAncestors(metaCsp(html)), withoutFrameAncestors(CONTENT_SECURITY_POLICY));
  assert.deepEqual(parseCsp(CONTENT_SECURITY_POLICY).get('frame-ancestors'), ["'none'"], 'the header carries frame-ancestors');
  // The comparison sees a directive that drifted, one that is missing, and one added.
  const drifted = html.replace("img-src 'self' data:", "img-src 'self'");
  assert.notDeepEqual(withoutFrameAncestors(metaCsp(drifted)), withoutFrameAncestors(CONTENT_SECURITY_POLICY));
  const missing = html.replace("; media-src 'none'", '');
  assert.notDeepEqual(withoutFrameAncestors(metaCsp(missing)), withoutFrameAncestors(CONTENT_SECURITY_POLICY));
  const added = html.replace("form-action 'none'", "form-action 'none'; script-src-attr 'none'");
  assert.notDeepEqual(withoutFrameAncestors(metaCsp(added)), withoutFrameAncestors(CONTENT_SECURITY_POLICY));
});

test('the checker itself catches what it is for', () => {
  assert.notDeepEqual(cspWeaknesses("default-src 'none'; script-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"), []);
  assert.notDeepEqual(cspWeaknesses("default-src 'self'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"), []);
  assert.notDeepEqual(cspWeaknesses("default-src 'none'; script-src 'self' https://cdn.example; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"), []);
  assert.notDeepEqual(cspWeaknesses("default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; style-src 'unsafe-inline'"), []);
  assert.notDeepEqual(cspWeaknesses("default-src 'none'; script-src 'self'"), []);
});

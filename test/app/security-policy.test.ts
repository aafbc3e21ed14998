// The renderer's denials, run on stand-ins for Electron's WebContents and Session: navigation,
// redirects, window.open, webviews, downloads and every permission are refused, and each refusal
// is logged; the one grant is clipboard-sanitized-write to the app page's top frame.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { APP_PAGE_URL } from '../../main/app/app-protocol.js';
import {
  denyPermissionCheck,
  denyPermissionRequest,
  grantsPermission,
  policeContents,
  policeSession,
  type DenyWindowOpen,
  type PermissionAsker,
  type PolicedContents,
  type PolicedSession,
  type Preventable,
} from '../../main/app/security-policy.js';

class FakeEvent implements Preventable {
  defaultPrevented = false;
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

class FakeContents extends EventEmitter implements PolicedContents {
  windowOpen: ((details: { url: string }) => DenyWindowOpen) | undefined;
  setWindowOpenHandler(handler: (details: { url: string }) => DenyWindowOpen): void {
    this.windowOpen = handler;
  }
}

type RequestHandler = Parameters<PolicedSession['setPermissionRequestHandler']>[0];
type CheckHandler = Parameters<PolicedSession['setPermissionCheckHandler']>[0];

class FakeSession extends EventEmitter implements PolicedSession {
  request: RequestHandler | undefined;
  check: CheckHandler | undefined;
  setPermissionRequestHandler(handler: RequestHandler): void {
    this.request = handler;
  }
  setPermissionCheckHandler(handler: CheckHandler): void {
    this.check = handler;
  }
}

// Electron's permission names (Session.setPermissionRequestHandler's documentation).
const PERMISSIONS = [
  'clipboard-read', 'clipboard-sanitized-write', 'display-capture', 'fullscreen', 'geolocation', 'idle-detection', 'media',
  'mediaKeySystem', 'midi', 'midiSysex', 'notifications', 'pointerLock', 'keyboardLock', 'openExternal', 'speaker-selection',
  'storage-access', 'top-level-storage-access', 'window-management', 'unknown', 'fileSystem', 'hid', 'serial', 'usb',
];

test('navigation and redirects are cancelled, whatever the URL, and logged', () => {
  const log: string[] = [];
  const contents = new FakeContents();
  policeContents(contents, (line) => log.push(line));
  for (const url of ['https://example.com/', 'file:///etc/passwd', 'app://chatty/renderer-demo/index.html', 'javascript:alert(1)']) {
    const navigation = new FakeEvent();
    contents.emit('will-navigate', navigation, url);
    assert.equal(navigation.defaultPrevented, true, url);
    const redirect = new FakeEvent();
    contents.emit('will-redirect', redirect, url);
    assert.equal(redirect.defaultPrevented, true, url);
  }
  assert.equal(log.length, 8);
  assert.match(log[0] ?? '', /refused navigation to https:\/\/example\.com\//);
  assert.match(log[1] ?? '', /refused a redirect to https:\/\/example\.com\//);
});

test('window.open (and target=_blank, middle-click) opens nothing', () => {
  const log: string[] = [];
  const contents = new FakeContents();
  policeContents(contents, (line) => log.push(line));
  assert.ok(contents.windowOpen, 'a window-open handler is set');
  for (const url of ['https://example.com/', 'about:blank', 'app://chatty/renderer-demo/index.html']) assert.deepEqual(contents.windowOpen({ url }), { action: 'deny' });
  assert.deepEqual(log, ['refused to open a window: https://example.com/', 'refused to open a window: about:blank', 'refused to open a window: app://chatty/renderer-demo/index.html']);
});

test("the page cannot veto its own unload (a beforeunload handler that returns a value): the window closes and the app quits all the same", () => {
  // In Electron the veto, unless main ignores it on will-prevent-unload, cancels the close silently:
  // a hostile page (or a buggy one) kept its window open and held up the app's quit.
  const log: string[] = [];
  const contents = new FakeContents();
  policeContents(contents, (line) => log.push(line));
  const unload = new FakeEvent();
  contents.emit('will-prevent-unload', unload);
  assert.equal(unload.defaultPrevented, true, "the page's veto is ignored");
  assert.deepEqual(log, ['refused the page\'s veto of its unload (beforeunload)']);
});

test('no webview is ever attached', () => {
  const log: string[] = [];
  const contents = new FakeContents();
  policeContents(contents, (line) => log.push(line));
  const event = new FakeEvent();
  contents.emit('will-attach-webview', event, { preload: '/evil.js', nodeIntegration: true }, { src: 'https://example.com/' });
  assert.equal(event.defaultPrevented, true);
  assert.deepEqual(log, ['refused to attach a webview']);
});

/** Where a permission is asked from: the app page's top frame, unless told otherwise. */
const APP_TOP: PermissionAsker = { requestingUrl: APP_PAGE_URL, isMainFrame: true };
const APP_ORIGIN = 'app://chatty';

test('every permission request is answered "no", and every permission check too, but the app page writing to the clipboard', () => {
  const log: string[] = [];
  const session = new FakeSession();
  policeSession(session, (line) => log.push(line));
  assert.ok(session.request && session.check, 'both handlers are set');
  const refused = PERMISSIONS.filter((p) => p !== 'clipboard-sanitized-write');
  for (const permission of refused) {
    const answers: boolean[] = [];
    session.request({}, permission, (granted) => answers.push(granted), APP_TOP);
    assert.deepEqual(answers, [false], permission);
    assert.equal(session.check({}, permission, APP_ORIGIN, APP_TOP), false, permission);
  }
  assert.equal(log.length, refused.length);
  assert.equal(log[0], 'refused the permission request: clipboard-read');
  const granted: boolean[] = [];
  session.request({}, 'clipboard-sanitized-write', (g) => granted.push(g), APP_TOP);
  assert.deepEqual(granted, [true]);
  assert.equal(session.check({}, 'clipboard-sanitized-write', APP_ORIGIN, APP_TOP), true);
  assert.equal(log.length, refused.length, 'a grant is not a refusal');
});

test("the clipboard write is granted only to the app page's top frame on the app's origin", () => {
  const write = 'clipboard-sanitized-write';
  assert.equal(grantsPermission(write, APP_TOP), true);
  assert.equal(grantsPermission(write, APP_TOP, APP_ORIGIN), true);
  assert.equal(grantsPermission(write, { isMainFrame: true }, APP_ORIGIN), true, 'a check may give only the origin');
  // What Electron's check handler really passes for the top frame: its own origin as the embedding origin.
  assert.equal(denyPermissionCheck()({}, write, APP_ORIGIN, { ...APP_TOP, embeddingOrigin: APP_ORIGIN }), true);
  const refused: [string, PermissionAsker | undefined, string | undefined][] = [
    ['a sub-frame of the page', { requestingUrl: APP_PAGE_URL, isMainFrame: false }, APP_ORIGIN],
    ['a frame embedded cross-origin', { requestingUrl: APP_PAGE_URL, isMainFrame: true, embeddingOrigin: 'https://evil.example' }, APP_ORIGIN],
    ['another origin', { requestingUrl: 'https://evil.example/', isMainFrame: true }, 'https://evil.example'],
    ['another app host', { requestingUrl: 'app://other/renderer-demo/index.html', isMainFrame: true }, 'app://other'],
    ['a file page', { requestingUrl: 'file:///renderer-demo/index.html', isMainFrame: true }, 'file://'],
    ['the app URL with credentials', { requestingUrl: 'app://u:p@chatty/renderer-demo/index.html', isMainFrame: true }, undefined],
    ['the app URL but another origin checking', APP_TOP, 'https://evil.example'],
    ['no details', undefined, APP_ORIGIN],
    ['no URL and no origin', { isMainFrame: true }, undefined],
    ['not a URL', { requestingUrl: 'chatty', isMainFrame: true }, 'null'],
  ];
  for (const [what, details, origin] of refused) assert.equal(grantsPermission(write, details, origin), false, what);
  for (const other of ['clipboard-read', 'deprecated-sync-clipboard-read', 'notifications', 'media', 'openExternal']) assert.equal(grantsPermission(other, APP_TOP, APP_ORIGIN), false, other);
});

test('downloads are cancelled', () => {
  const log: string[] = [];
  const session = new FakeSession();
  policeSession(session, (line) => log.push(line));
  const event = new FakeEvent();
  session.emit('will-download', event, { getURL: () => 'https://example.com/payload.sh' });
  assert.equal(event.defaultPrevented, true);
  assert.deepEqual(log, ['refused a download: https://example.com/payload.sh']);
});

test('the handlers stand alone: each refuses on its own', () => {
  const answers: boolean[] = [];
  denyPermissionRequest(() => {})(undefined, 'media', (granted) => answers.push(granted), APP_TOP);
  assert.deepEqual(answers, [false]);
  assert.equal(denyPermissionCheck()(undefined, 'notifications', APP_ORIGIN, APP_TOP), false);
});

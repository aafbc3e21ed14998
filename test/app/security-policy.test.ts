// Item 4's denials, run on stand-ins for Electron's WebContents and Session: navigation,
// redirects, window.open, webviews, downloads and every permission are refused, and each refusal
// is logged.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import {
  denyPermissionCheck,
  denyPermissionRequest,
  policeContents,
  policeSession,
  type DenyWindowOpen,
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

type RequestHandler = (contents: unknown, permission: string, callback: (granted: boolean) => void) => void;
type CheckHandler = (contents: unknown, permission: string) => boolean;

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

test('no webview is ever attached', () => {
  const log: string[] = [];
  const contents = new FakeContents();
  policeContents(contents, (line) => log.push(line));
  const event = new FakeEvent();
  contents.emit('will-attach-webview', event, { preload: '/evil.js', nodeIntegration: true }, { src: 'https://example.com/' });
  assert.equal(event.defaultPrevented, true);
  assert.deepEqual(log, ['refused to attach a webview']);
});

test('every permission request is answered "no", and every permission check too', () => {
  const log: string[] = [];
  const session = new FakeSession();
  policeSession(session, (line) => log.push(line));
  assert.ok(session.request && session.check, 'both handlers are set');
  for (const permission of PERMISSIONS) {
    const answers: boolean[] = [];
    session.request({}, permission, (granted) => answers.push(granted));
    assert.deepEqual(answers, [false], permission);
    assert.equal(session.check({}, permission), false, permission);
  }
  assert.equal(log.length, PERMISSIONS.length);
  assert.equal(log[0], 'refused the permission request: clipboard-read');
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
  denyPermissionRequest(() => {})(undefined, 'media', (granted) => answers.push(granted));
  assert.deepEqual(answers, [false]);
  assert.equal(denyPermissionCheck()(undefined, 'notifications'), false);
});

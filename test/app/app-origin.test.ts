// An app whose own pages already use the `app:` scheme (electron-serve's default, say) could not
// use handleAppProtocol: the scheme and host were fixed at app://chatty, Electron keeps one handler
// per scheme, and registerSchemesAsPrivileged keeps only its last call. Now the page's origin is
// the app's choice (`origin`), with its registration (`appSchemeRegistration`), and the bridge
// answers that page (`pageUrl`).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { APP_SCHEME_REGISTRATION, appProtocolHandler, appSchemeRegistration, attachDesktopBridge, CONTENT_SECURITY_POLICY, handleAppProtocol, type ProtocolSession } from '../../main/app/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace } from './bridge-fixture.js';
import { StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-app-origin-'));
const pages = join(scratch, 'pages');
mkdirSync(pages);
writeFileSync(join(pages, 'index.html'), '<!doctype html><title>approvals</title>');
let gw: RunningGateway;
before(async () => {
  gw = await gatewayWithWorkspace();
});
after(async () => {
  await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

test("the app: handler answers the origin the app chooses: its pages and the package's renderer there, nothing on app://chatty", async () => {
  const refused: string[] = [];
  const handler = appProtocolHandler({ pages, origin: 'chatty-ui://approvals', log: (line) => refused.push(line) });
  const page = await handler(new Request('chatty-ui://approvals/index.html'));
  assert.equal(page.status, 200);
  assert.equal(await page.text(), '<!doctype html><title>approvals</title>');
  assert.equal(page.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  const renderer = await handler(new Request('chatty-ui://approvals/out/renderer/index.js'));
  assert.equal(renderer.status, 200);
  assert.equal((await handler(new Request('chatty-ui://approvals/out/main/display/index.js'))).status, 200);
  for (const other of ['app://chatty/index.html', 'app://chatty/out/renderer/index.js', 'chatty-ui://chatty/index.html', 'app://approvals/index.html']) {
    assert.equal((await handler(new Request(other))).status, 404, other);
  }
  assert.equal(refused.length, 4);
});

test('handleAppProtocol handles the chosen scheme; appSchemeRegistration gives its privileges; the default is app://chatty as before', () => {
  const handled: string[] = [];
  const session: ProtocolSession = { protocol: { handle: (scheme) => void handled.push(scheme) } };
  handleAppProtocol(session, { pages, origin: 'chatty-ui://approvals' });
  handleAppProtocol(session, { pages });
  assert.deepEqual(handled, ['chatty-ui', 'app']);
  assert.deepEqual(appSchemeRegistration('chatty-ui'), { scheme: 'chatty-ui', privileges: { standard: true, secure: true } });
  assert.deepEqual(appSchemeRegistration(), APP_SCHEME_REGISTRATION);
});

test('an origin that is not <scheme>://<host> is refused at once, saying what is wrong', () => {
  for (const origin of ['chatty-ui://approvals/index.html', 'chatty-ui:approvals', 'not an origin', 'chatty-ui://user@approvals', 'chatty-ui://']) {
    assert.throws(() => appProtocolHandler({ pages, origin }), /origin must be <scheme>:\/\/<host>/, origin);
  }
  assert.throws(() => appSchemeRegistration('bad scheme'), /not a URL scheme/);
});

test("the bridge answers the page on the chosen origin (pageUrl)", async () => {
  const contents = new StandInWebContents();
  contents.mainFrame.url = 'chatty-ui://approvals/index.html';
  const detach = attachDesktopBridge(gw.gateway, contents, { pageUrl: 'chatty-ui://approvals/index.html' });
  const info = await new StandInIpcMain().invoke('chatty:gateway-info', contents, contents.mainFrame);
  assert.deepEqual(info, { socketPath: gw.socketPath, tokenPath: gw.tokenPath, runtimeDir: gw.runtimeDir });
  detach();
});

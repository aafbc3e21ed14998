// `origin` took any `<scheme>://<host>`: a web or built-in scheme (https, http, file, ws,
// javascript, blob, about, chrome, devtools…) made handleAppProtocol take that scheme over for the
// whole session (every https request of it got the package's 404), and with `pageUrl` on a web
// origin the bridge trusted whatever site loaded there. A host with capitals or non-ASCII was
// accepted but never served (Chromium lower-cases a standard scheme's host). Now only a custom
// scheme and a lower-case ASCII host pass, for `origin`, `appSchemeRegistration` and the bridge's
// `pageUrl`; the others are refused at once, saying why.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { appProtocolHandler, appSchemeRegistration, attachDesktopBridge, handleAppProtocol, type ProtocolSession } from '../../main/app/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace } from './bridge-fixture.js';
import { StandInWebContents } from './electron-stand-in/electron.js';

let gw: RunningGateway;
before(async () => {
  gw = await gatewayWithWorkspace();
});
after(() => gw.close());

const BUILT_IN = ['https', 'http', 'file', 'ws', 'wss', 'ftp', 'javascript', 'blob', 'about', 'data', 'filesystem', 'chrome', 'chrome-extension', 'chrome-untrusted', 'devtools', 'view-source'];

test('a web or built-in scheme is refused as the origin, for its registration and for the bridge’s pageUrl; nothing is handled', () => {
  const handled: string[] = [];
  const session: ProtocolSession = { protocol: { handle: (scheme) => void handled.push(scheme) } };
  for (const scheme of BUILT_IN) {
    const origin = `${scheme}://chatty`;
    assert.throws(() => handleAppProtocol(session, { origin }), new RegExp(`'${scheme}' is a scheme Chromium or Electron already knows`), origin);
    assert.throws(() => appProtocolHandler({ origin }), /already knows/, origin);
    assert.throws(() => appSchemeRegistration(scheme), /already knows/, scheme);
    const contents = new StandInWebContents();
    assert.throws(() => attachDesktopBridge(gw.gateway, contents, { pageUrl: `${origin}/index.html` }), /pageUrl .*already knows/, origin);
  }
  assert.deepEqual(handled, []);
});

test('a host with capitals or non-ASCII is refused (Chromium would serve it lower-cased, so never)', () => {
  for (const origin of ['chatty-ui://Approvals', 'chatty-ui://bücher', 'chatty-ui://APPROVALS', 'chatty-ui://approvals:8080']) {
    assert.throws(() => appProtocolHandler({ origin }), /host must be lower-case ASCII/, origin);
    assert.throws(() => attachDesktopBridge(gw.gateway, new StandInWebContents(), { pageUrl: `${origin}/index.html` }), /host must be lower-case ASCII/, origin);
  }
  assert.throws(() => appSchemeRegistration('Chatty-UI'), /not a URL scheme/);
});

test('a custom scheme with a lower-case host still passes', () => {
  assert.equal(typeof appProtocolHandler({ origin: 'chatty-ui://approvals' }), 'function');
  assert.equal(typeof appProtocolHandler({ origin: 'app://chatty.approvals-2' }), 'function');
  const contents = new StandInWebContents();
  const detach = attachDesktopBridge(gw.gateway, contents, { pageUrl: 'chatty-ui://approvals/index.html' });
  detach();
});

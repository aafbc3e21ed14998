// attachDesktopBridge (the package's ./electron) on its own: a real started gateway, a stand-in
// webContents (the bridge needs no `electron` module: everything it touches is passed in).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge, DEFAULT_PAGE_URL } from '../../main/app/index.js';
import { ProtocolGateway } from '../../main/gateway/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace } from './bridge-fixture.js';
import { StandInFrame, StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

let gw: RunningGateway;
before(async () => {
  gw = await gatewayWithWorkspace();
});
after(() => gw.close());

const ipc = new StandInIpcMain();
/** A window at `url`, as Electron reports its top frame. */
function windowAt(url: string): StandInWebContents {
  const contents = new StandInWebContents();
  contents.mainFrame.url = url;
  return contents;
}
const info = (contents: StandInWebContents, frame: StandInFrame | null = contents.mainFrame): Promise<unknown> => ipc.invoke('chatty:gateway-info', contents, frame);

test('a gateway not started yet is refused with what to do', () => {
  assert.throws(() => attachDesktopBridge(new ProtocolGateway({ list: () => [] }), windowAt(DEFAULT_PAGE_URL)), /the gateway is not started \(await gateway\.start\(\) first\)/);
});

test("the bridge answers the top frame at app://chatty/index.html by default, or at the page the app names; detaching removes every handler", async () => {
  const contents = windowAt(DEFAULT_PAGE_URL);
  const detach = attachDesktopBridge(gw.gateway, contents);
  assert.deepEqual(await info(contents), { socketPath: gw.socketPath, tokenPath: gw.tokenPath, runtimeDir: gw.runtimeDir });
  await assert.rejects(info(contents, new StandInFrame(DEFAULT_PAGE_URL)), /is not the trusted window/);
  detach();
  detach(); // twice is once
  assert.equal(contents.ipc.handlers.size, 0);
  await assert.rejects(info(contents), /No handler registered/);

  const named = windowAt('app://chatty/main.html');
  const lines: string[] = [];
  const detachNamed = attachDesktopBridge(gw.gateway, named, { pageUrl: 'app://chatty/main.html', log: (line) => lines.push(line) });
  assert.ok(await info(named));
  named.mainFrame.url = DEFAULT_PAGE_URL; // the default page is not this bridge's
  await assert.rejects(info(named), /is not the trusted window/);
  assert.match(lines.join('\n'), /refused chatty:gateway-info: sender app:\/\/chatty\/index\.html is not the trusted window/);
  detachNamed();
});

test('a second bridge on the same webContents is refused, and the first goes on answering; once detached, one may be attached again', async () => {
  const contents = windowAt(DEFAULT_PAGE_URL);
  const detach = attachDesktopBridge(gw.gateway, contents);
  assert.throws(() => attachDesktopBridge(gw.gateway, contents), /this webContents has a bridge already \(call its detach function first\)/);
  assert.ok(await info(contents));
  detach();
  const again = attachDesktopBridge(gw.gateway, contents);
  assert.ok(await info(contents));
  again();
});

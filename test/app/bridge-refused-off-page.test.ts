// A page whose preload copy someone else changed may run their script, and that script can leave
// the page's URL for a route of its own document (history.pushState, a hash: no will-navigate, the
// document stays) before the change is found. The window is then refused and nobody to ask, but the
// page is told only at pageUrl (chatty:refused), and the app's onRefused was given only with it: the
// script kept the app's dialog, the notice "where no page script reaches", from ever showing for as
// long as it stayed away. Now the app is told once a document wherever the top frame is; the page
// still only at its page (told when it comes back), and a window with no document yet (made, not
// loaded: the example attaches before loadURL) is not a refused page.
import assert from 'node:assert/strict';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { attachDesktopBridge, DEFAULT_PAGE_URL, preloadCopy } from '../../main/app/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { windowAtPage } from './bridge-fixture.js';
import { StandInEvent, StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-refused-off-page-')));
let gw: RunningGateway | undefined;
after(async () => {
  await gw?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const ipc = new StandInIpcMain();
const snapshot = (window: StandInWebContents): Promise<unknown> => ipc.invoke('chatty:snapshot', window, window.mainFrame);
const refusedSent = (window: StandInWebContents): number => window.sent.filter((s) => s.channel === 'chatty:refused').length;
/** The page's own script moves its top frame within its document (Electron: did-navigate-in-page). */
const route = (window: StandInWebContents, url: string): void => {
  window.mainFrame.url = url;
  window.emit('did-navigate-in-page', new StandInEvent(), url, true, 1, 1);
};

// One test: the copies and the count of changes are the process's.
test("onRefused is called for a page refused for its preload while its script keeps the top frame at a route of its own (a hash), once; the page is told when back at its page; a window not loaded yet is not told", async () => {
  const source = join(scratch, 'package', 'index.cjs');
  mkdirSync(join(scratch, 'package'), { recursive: true });
  writeFileSync(source, "require('electron').contextBridge.exposeInMainWorld('chatty', {});\n");
  const copy = preloadCopy(join(scratch, 'user-data'), source);
  const workspace = join(scratch, 'agents');
  mkdirSync(workspace);
  gw = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace } } });
  const window = windowAtPage();
  const told: string[] = [];
  const detach = attachDesktopBridge(gw.gateway, window, { onRefused: (reason) => void told.push(reason) });
  const fresh = new StandInWebContents(); // made, not loaded yet (its top frame at '')
  const toldFresh: string[] = [];
  let detachFresh: (() => void) | undefined;
  try {
    assert.ok(await snapshot(window));
    // The agent's approved ln, chmod and write of the copy: the page may run it from now on.
    const notes = join(workspace, 'notes.cjs');
    linkSync(copy, notes);
    chmodSync(notes, 0o600);
    writeFileSync(notes, "/* the agent's */");
    rmSync(notes);
    route(window, `${DEFAULT_PAGE_URL}#/elsewhere`);
    // Any check finds the change (here the page's own call, refused).
    await assert.rejects(snapshot(window), /refused chatty:snapshot: the window's preload copy/);
    assert.equal(refusedSent(window), 0, 'the page is told at its page only');
    assert.equal(told.length, 1, 'the app is told, though the top frame is not at the page');
    assert.match(told[0] ?? '', /^the window's preload copy .* was changed by someone else/);
    route(window, DEFAULT_PAGE_URL);
    assert.equal(refusedSent(window), 1, 'back at its page, the page is told');
    route(window, `${DEFAULT_PAGE_URL}#/again`);
    route(window, DEFAULT_PAGE_URL);
    await assert.rejects(snapshot(window), /refused chatty:snapshot/);
    assert.deepEqual([told.length, refusedSent(window)], [1, 1], 'once a document, for the app and the page');
    // A change was counted before this window's attach; it has no document yet: nothing to refuse.
    detachFresh = attachDesktopBridge(gw.gateway, fresh, { onRefused: (reason) => void toldFresh.push(reason) });
    fresh.startNavigation(DEFAULT_PAGE_URL); // its first load: the copies renewed before it
    fresh.navigate(DEFAULT_PAGE_URL);
    assert.ok(await snapshot(fresh), 'its page is answered');
    assert.deepEqual(toldFresh, []);
    // The person's reload of the refused window: answered again; told again only for a new refusal.
    window.startNavigation();
    window.reload();
    assert.ok(await snapshot(window));
    assert.equal(told.length, 1);
  } finally {
    detachFresh?.();
    detach();
  }
});

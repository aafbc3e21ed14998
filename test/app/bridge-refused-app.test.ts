// The page refused for its preload is told so (chatty:refused, on the popover's trace line), but a
// page whose preload copy someone else changed may run their script, and that script can hide the
// notice: the person then sees a page that looks alive and answers nothing. The bridge's
// `onRefused` option tells the app in the main process, once a document as the page is told, so it
// can say it where the page's script cannot reach (examples/electron-app: Electron's dialog).
import assert from 'node:assert/strict';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Refused } from '../../main/app/bridge/contract.js';
import { attachDesktopBridge, preloadCopy } from '../../main/app/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { windowAtPage } from './bridge-fixture.js';
import { StandInIpcMain } from './electron-stand-in/electron.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-refused-app-')));
const gateways: RunningGateway[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A copy of a stand-in preload under `name`'s userData, and a started gateway whose agents work in `<name>/agents`. */
async function launch(name: string): Promise<{ copy: string; workspace: string; gw: RunningGateway }> {
  const source = join(scratch, name, 'package', 'index.cjs');
  mkdirSync(join(scratch, name, 'package'), { recursive: true });
  writeFileSync(source, "require('electron').contextBridge.exposeInMainWorld('chatty', {});\n");
  const copy = preloadCopy(join(scratch, name, 'user-data'), source);
  const workspace = join(scratch, name, 'agents');
  mkdirSync(workspace);
  const gw = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace } } });
  gateways.push(gw);
  return { copy, workspace, gw };
}

/** The agent's approved `ln <copy> notes.cjs`, `chmod u+w notes.cjs` and a plain write. */
function agentWritesThroughLink(copy: string, workspace: string): void {
  const notes = join(workspace, 'notes.cjs');
  linkSync(copy, notes);
  chmodSync(notes, 0o600);
  writeFileSync(notes, "/* the agent's */");
  rmSync(notes);
}

const snapshot = (window: ReturnType<typeof windowAtPage>): Promise<unknown> => new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame);

// One test: the copies are the process's, and a window attached after a change counted is refused at its attach.
test("onRefused: the app is told in the main process, with the reason the page is sent, once a document, again for a later document refused; one that throws is logged and the page refused all the same", async () => {
  const { copy, workspace, gw } = await launch('told');
  const window = windowAtPage();
  const other = windowAtPage();
  const told: string[] = [];
  const lines: string[] = [];
  const detach = attachDesktopBridge(gw.gateway, window, { onRefused: (reason) => void told.push(reason) });
  const detachOther = attachDesktopBridge(gw.gateway, other, {
    log: (line) => lines.push(line),
    onRefused: () => {
      throw new Error('no dialog today');
    },
  });
  try {
    assert.ok(await snapshot(window));
    assert.deepEqual(told, [], 'nothing to tell while the page is answered');
    agentWritesThroughLink(copy, workspace);
    await assert.rejects(snapshot(window), /refused chatty:snapshot: the window's preload copy/);
    await assert.rejects(snapshot(window), /refused chatty:snapshot/);
    const sent = window.sent.filter((s) => s.channel === 'chatty:refused').map((s) => (s.payload as Refused).reason);
    assert.equal(sent.length, 1);
    assert.deepEqual(told, sent, 'the app is told what the page is, once');
    // The other window's onRefused threw: its page is refused and told all the same, the log says so.
    await assert.rejects(snapshot(other), /refused chatty:snapshot: the window's preload copy/);
    assert.equal(other.sent.filter((s) => s.channel === 'chatty:refused').length, 1);
    assert.ok(lines.some((line) => line.startsWith('bridge: onRefused failed: no dialog today')), lines.join(' | '));
    window.startNavigation(); // the person's reload: the copy renewed, the page answered again
    window.reload();
    assert.ok(await snapshot(window));
    agentWritesThroughLink(copy, workspace);
    await assert.rejects(snapshot(window), /refused chatty:snapshot/);
    assert.equal(told.length, 2, 'the next document refused is told again');
  } finally {
    detachOther();
    detach();
  }
});

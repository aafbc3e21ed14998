// A plugin's capability request over the desktop bridge (issue 20 item 3): the real grant desk
// (PluginGrants) attached with attachDesktopBridge to a real started gateway and a stand-in
// webContents; the test plays the page (its IPC calls) and reads what main sent it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type PendingGrant, type Snapshot, type Withdrawn } from '../../main/app/bridge/contract.js';
import { attachDesktopBridge, DEFAULT_PAGE_URL } from '../../main/app/index.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace } from './bridge-fixture.js';
import { grantRequest } from '../helpers/grant-request.js';
import { StandInFrame, StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

let gw: RunningGateway;
before(async () => {
  gw = await gatewayWithWorkspace();
});
after(() => gw.close());

const ASK = grantRequest();

const ipc = new StandInIpcMain();

/** A window at the app's page with a bridge that answers `desk`. */
function bridged(desk: PluginGrants) {
  const contents = new StandInWebContents();
  contents.mainFrame.url = DEFAULT_PAGE_URL;
  const lines: string[] = [];
  const detach = attachDesktopBridge(gw.gateway, contents, { grants: desk, log: (line) => lines.push(line) });
  /** An IPC call from the window's top frame (or `frame`). */
  const call = (channel: string, payload?: unknown, frame: StandInFrame | null = contents.mainFrame): Promise<unknown> => ipc.invoke(channel, contents, frame, payload);
  const snapshot = async (): Promise<Snapshot> => (await call(INVOKE_CHANNELS.snapshot)) as Snapshot;
  return { contents, detach, call, snapshot, lines };
}

describe('grant requests over the bridge', () => {
  test('a request reaches the window as its own kind (chatty:grant) and is in the snapshot; Grant from the page settles the desk, once', async () => {
    const desk = new PluginGrants();
    const w = bridged(desk);
    const outcome = desk.ask(ASK);
    const sent = await w.contents.sentOn<PendingGrant>(EVENT_CHANNELS.grant);
    assert.match(sent.requestId, /^grant-[1-9][0-9]*$/);
    assert.deepEqual({ ...sent, requestId: undefined, at: undefined }, { ...ASK, asks: ASK.asks.map((ask) => ({ ...ask, reach: '' })), digestShort: 'sha256:ab12cd34ef56…', requestId: undefined, at: undefined });
    assert.deepEqual((await w.snapshot()).grants, [sent]);
    assert.deepEqual(await w.call(INVOKE_CHANNELS.answerGrant, { requestId: sent.requestId, decision: 'granted' }), { accepted: true });
    assert.equal(await outcome, 'granted');
    assert.deepEqual((await w.snapshot()).grants, []);
    await assert.rejects(w.call(INVOKE_CHANNELS.answerGrant, { requestId: sent.requestId, decision: 'denied' }), new RegExp(`no capability request ${sent.requestId} is waiting`));
    w.detach();
  });

  test('Deny reaches the desk; an answer that does not parse, is for another kind, or comes from a sub-frame is refused and the request keeps waiting', async () => {
    const desk = new PluginGrants();
    const w = bridged(desk);
    const outcome = desk.ask(ASK);
    const { requestId } = await w.contents.sentOn<PendingGrant>(EVENT_CHANNELS.grant);
    for (const bad of [{ requestId, decision: 'yes' }, { requestId, decision: 'granted', remember: 'always' }, { requestId: 'approval-1', decision: 'granted' }, { requestId }, 'granted']) {
      await assert.rejects(w.call(INVOKE_CHANNELS.answerGrant, bad), /refused chatty:answer-grant: invalid payload/, JSON.stringify(bad));
    }
    await assert.rejects(w.call(INVOKE_CHANNELS.answerGrant, { requestId, decision: 'granted' }, new StandInFrame(DEFAULT_PAGE_URL)), /is not the trusted window/);
    // An approval's answer channel does not answer a grant.
    await assert.rejects(w.call(INVOKE_CHANNELS.answerApproval, { requestId: 'approval-1', verdict: 'approved' }), /no approval approval-1 is waiting/);
    assert.deepEqual(desk.waiting().map((r) => r.plugin), ['text-tools'], 'still waiting');
    assert.equal((await w.snapshot()).grants.length, 1);
    await w.call(INVOKE_CHANNELS.answerGrant, { requestId, decision: 'denied' });
    assert.equal(await outcome, 'denied');
    assert.ok(w.lines.some((line) => line.includes('refused chatty:answer-grant: invalid payload')), w.lines.join('\n'));
    w.detach();
  });

  test('a reload keeps the request waiting (the new page finds it in its snapshot); closing the window leaves it waiting; detaching hands it back to the desk', async () => {
    const desk = new PluginGrants();
    const w = bridged(desk);
    const outcome = desk.ask(ASK);
    const sent = await w.contents.sentOn<PendingGrant>(EVENT_CHANNELS.grant);
    w.contents.emit('did-navigate');
    assert.deepEqual((await w.snapshot()).grants, [sent]);
    w.contents.destroy();
    assert.deepEqual(desk.waiting().map((r) => r.plugin), ['text-tools'], 'no window is no answer');
    const during = desk.ask({ ...ASK, plugin: 'asked-with-no-window' });
    w.detach();
    assert.deepEqual(desk.waiting().map((r) => r.plugin), ['text-tools', 'asked-with-no-window']);
    // The next window's bridge gets both: its page finds them in its snapshot, and answers them.
    const next = bridged(desk);
    const [first, second] = (await next.snapshot()).grants;
    assert.deepEqual([first?.plugin, second?.plugin], ['text-tools', 'asked-with-no-window']);
    await next.call(INVOKE_CHANNELS.answerGrant, { requestId: first!.requestId, decision: 'granted' });
    await next.call(INVOKE_CHANNELS.answerGrant, { requestId: second!.requestId, decision: 'denied' });
    assert.equal(await outcome, 'granted');
    assert.equal(await during, 'denied');
    next.detach();
  });

  test('withdrawn (the module unloaded): the page is told (chatty:withdrawn) and the request leaves the snapshot; its answer is then refused', async () => {
    const desk = new PluginGrants();
    const w = bridged(desk);
    const unloaded = new AbortController();
    const outcome = desk.ask(ASK, unloaded.signal);
    const { requestId } = await w.contents.sentOn<PendingGrant>(EVENT_CHANNELS.grant);
    unloaded.abort();
    assert.equal(await outcome, 'withdrawn');
    const withdrawn = await w.contents.sentOn<Withdrawn>(EVENT_CHANNELS.withdrawn, (x) => x.requestId === requestId);
    assert.equal(withdrawn.reason, 'the plugin no longer waits for it');
    assert.deepEqual((await w.snapshot()).grants, []);
    await assert.rejects(w.call(INVOKE_CHANNELS.answerGrant, { requestId, decision: 'granted' }), /is waiting/);
    w.detach();
  });
});

// The window's preload is a copy made at launch (main/app/preload-copy.ts), not the package's own
// file: Electron reads `webPreferences.preload` again at every load, so a write through a hard link
// to the package's file (an agent's one approved `ln …/out/preload/index.cjs notes.cjs`, then a
// plain write of notes.cjs) was the next load's preload, answering every approval as the page.
// The folders on both sides of the copy are checked too: 9d8d128 checked only
// `<userData>/chatty-preload` itself and the source's own name, so another user who could write a
// folder above renamed the copy folder away and put theirs at its name (the path the window was
// given, read again at every load, was then their script), and a source reached through a link
// (the package's out/preload leading into the agents' workspace) or lying in a bridged workspace
// was copied: an agent's plain write there was the next launch's preload.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, cpSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { attachDesktopBridge, preloadCopy } from '../../main/app/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import type { PendingApproval, Snapshot, Withdrawn } from '../../main/app/bridge/contract.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import { grantRequest } from '../helpers/grant-request.js';
import { plan } from '../broker/helpers.js';
import { planGateway, windowAtPage } from './bridge-fixture.js';
import { StandInIpcMain } from './electron-stand-in/electron.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-preload-copy-')));
const gateways: RunningGateway[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

const PRELOAD = "require('electron').contextBridge.exposeInMainWorld('chatty', {});\n";
const AGENT = "/* the agent's */ require('electron').contextBridge.exposeInMainWorld('chatty', { evil: true });\n";

/** A stand-in for the package's built preload, in a folder of its own. */
function packagePreload(name: string): string {
  const dir = join(scratch, name, 'package');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.cjs'), PRELOAD);
  return join(dir, 'index.cjs');
}

/**
 * A copy of `name`'s stand-in preload under its userData, a gateway whose agents work in
 * `<name>/agents`, and a window at its page with a bridge attached (its log lines kept). With
 * `beforeAttach`, run between the gateway's start and the window (the window's page then loaded).
 */
async function bridgedWindow(name: string, beforeAttach: (copy: string, workspace: string) => void = () => {}) {
  const userData = join(scratch, name, 'user-data');
  const copy = preloadCopy(userData, packagePreload(name));
  const workspace = join(scratch, name, 'agents');
  mkdirSync(workspace);
  const gw = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace } } });
  gateways.push(gw);
  beforeAttach(copy, workspace);
  const window = windowAtPage();
  const lines: string[] = [];
  const detach = attachDesktopBridge(gw.gateway, window, { log: (line) => lines.push(line) });
  return { userData, copy, workspace, window, lines, detach };
}

/** The agent's approved `ln <copy> notes.cjs`, then `chmod u+w notes.cjs` and a plain write; returns notes.cjs. */
function agentWritesThroughLink(copy: string, workspace: string): string {
  const notes = join(workspace, 'notes.cjs');
  linkSync(copy, notes);
  chmodSync(notes, 0o600);
  writeFileSync(notes, AGENT);
  return notes;
}

/** `window`'s page is refused until a load renews the copies; then it is answered. */
async function refusedUntilReloaded(window: Awaited<ReturnType<typeof bridgedWindow>>['window']): Promise<void> {
  await assert.rejects(new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), /refused chatty:snapshot/);
  window.startNavigation();
  window.reload();
  assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame));
}

test("a write through a hard link to the package's preload, made after launch, changes nothing a window runs", () => {
  const source = packagePreload('link-to-source');
  const userData = join(scratch, 'link-to-source', 'user-data');
  const copy = preloadCopy(userData, source);
  assert.equal(copy, join(userData, 'chatty-preload', `index-${createHash('sha256').update(PRELOAD).digest('hex')}.cjs`));
  assert.equal(readFileSync(copy, 'utf8'), PRELOAD);
  linkSync(source, join(scratch, 'link-to-source', 'notes.cjs'));
  writeFileSync(join(scratch, 'link-to-source', 'notes.cjs'), AGENT);
  assert.equal(readFileSync(copy, 'utf8'), PRELOAD, "the window's preload is the copy, not the file written");
  assert.equal(statSync(copy).mode & 0o777, 0o400, 'the copy is read-only');
  assert.equal(statSync(join(userData, 'chatty-preload')).mode & 0o777, 0o700, 'in an owner-only folder');
});

test('each launch makes a new copy: a hard link to the last one, written, is not what the next launch runs', () => {
  const source = packagePreload('link-to-copy');
  const userData = join(scratch, 'link-to-copy', 'user-data');
  const first = preloadCopy(userData, source);
  const notes = join(scratch, 'link-to-copy', 'notes.cjs');
  linkSync(first, notes);
  chmodSync(notes, 0o600);
  writeFileSync(notes, AGENT);
  const next = preloadCopy(userData, source);
  assert.equal(next, first, 'named by its digest');
  assert.equal(readFileSync(next, 'utf8'), PRELOAD);
  assert.notEqual(statSync(next).ino, statSync(notes).ino, 'a new file, not the one linked');
});

test("a hard link to this launch's copy, written, is not what the window's next load runs: the bridge renews the copy as each new document of the top frame starts", async () => {
  const { copy, workspace, window, lines, detach } = await bridgedWindow('link-in-launch');
  try {
    agentWritesThroughLink(copy, workspace);
    window.startNavigation(); // a reload, or the load after a crash: Electron reads the preload next
    assert.equal(readFileSync(copy, 'utf8'), PRELOAD, 'what the next load reads is the package\'s preload');
    assert.equal(statSync(copy).mode & 0o777, 0o400);
    assert.equal(statSync(copy).nlink, 1, 'a new file the link does not reach');
    assert.ok(lines.some((line) => /preload copy .* 2 names/.test(line)), `the second name is logged: ${lines.join(' | ')}`);
    // A sub-frame's or a same-document navigation runs no preload: nothing is renewed.
    const ino = statSync(copy).ino;
    window.startNavigation(undefined, { isMainFrame: false });
    window.startNavigation(undefined, { isSameDocument: true });
    assert.equal(statSync(copy).ino, ino);
  } finally {
    detach();
  }
});

test('a link made and written between the renewal and the read (the agent watching the folder) is found when the page is there: its calls are refused until a load renews the copy', async () => {
  const { copy, workspace, window, lines, detach } = await bridgedWindow('race');
  try {
    window.startNavigation(); // the renewal
    const notes = agentWritesThroughLink(copy, workspace); // the agent links the new copy the moment it is there
    rmSync(notes); // and takes its name away again: the copy has one name, the agent's bytes
    window.reload(); // Electron read the preload in between: the agent's bytes
    // Refused, saying which copy, how it changed, and what to do (the app's menu has no Reload).
    await assert.rejects(
      new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame),
      (err: Error) => err.message.includes(`refused chatty:snapshot: the window's preload copy ${copy} was changed by someone else after this page's copy was renewed (it is not the file written`) && /so it is answered no more\. Reload the window \(the app's webContents\.reload\(\), or close the window and open it again, or restart the app\)/.test(err.message),
      'the page is not answered, and told why',
    );
    assert.ok(lines.some((line) => /preload copy .* was changed by someone else: .*Look for who could write it: an agent's approved ln, chmod or write in the app's userData/.test(line)), lines.join(' | '));
    window.startNavigation(); // the next load: written again, untouched until the page is there
    window.reload();
    assert.equal(readFileSync(copy, 'utf8'), PRELOAD);
    assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame));
  } finally {
    detach();
  }
});

test("a navigation started and never committed (one will-navigate refuses, which the page itself can start) renews for the next document only: the page that may have run a change is still refused", async () => {
  // A change found at the commit, then the agent's preload sets location: Electron announces the
  // navigation (did-start-navigation) before will-navigate refuses it, and the document stays.
  const seen = await bridgedWindow('refused-nav-seen');
  // A change made after the commit (the renderer reads the preload after it), seen by no one yet.
  const unseen = await bridgedWindow('refused-nav-unseen');
  try {
    seen.window.startNavigation();
    rmSync(agentWritesThroughLink(seen.copy, seen.workspace));
    seen.window.reload();
    unseen.window.startNavigation();
    unseen.window.reload();
    rmSync(agentWritesThroughLink(unseen.copy, unseen.workspace));
    for (const { window } of [seen, unseen]) {
      window.startNavigation('https://example.com/'); // refused: no new document
      window.cancelNavigation('https://example.com/'); // as Electron tells it (ERR_ABORTED)
      await assert.rejects(new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), /refused chatty:snapshot/, 'the page is not answered');
    }
    for (const { window } of [seen, unseen]) {
      window.startNavigation(); // a load renews the copies for the document it commits
      window.reload();
      assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame));
    }
  } finally {
    seen.detach();
    unseen.detach();
  }
});

test('a change the load\'s own renewal finds (the agent linked and wrote while the page was idle): the page that load commits, which reads the fresh copy, is answered; the page before it is refused', async () => {
  const { copy, workspace, window, detach } = await bridgedWindow('found-by-renewal');
  try {
    window.startNavigation();
    window.reload();
    agentWritesThroughLink(copy, workspace); // nobody calls: the page is idle
    window.startNavigation(); // the person reloads: the renewal finds the change and writes a fresh copy
    await assert.rejects(new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), /refused chatty:snapshot: the window's preload copy/, 'the page shown may have run it');
    window.reload();
    assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), 'the page of the load that renewed it is answered: one reload, as the refusal says');
  } finally {
    detach();
  }
});

test('a renewal that failed for a navigation that was then cancelled (a link in the page) is not held against a later load: once what it named is put right, one reload answers the page', async () => {
  const { userData, window, detach } = await bridgedWindow('failed-then-cancelled');
  try {
    window.startNavigation();
    window.reload();
    chmodSync(join(userData, 'chatty-preload'), 0o770);
    window.startNavigation('https://example.com/'); // will-navigate refuses it: no new document
    window.cancelNavigation('https://example.com/');
    assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), 'the page shown read its preload before: still answered');
    chmodSync(join(userData, 'chatty-preload'), 0o700); // put right
    window.startNavigation();
    window.reload();
    assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), 'one reload answers the page');
  } finally {
    chmodSync(join(userData, 'chatty-preload'), 0o700);
    detach();
  }
});

test("a change found at one window's call refuses at once every window whose page may have run it: what waited in the other window is withdrawn, saying why, and nothing more is sent to it", { timeout: 180_000 }, async () => {
  const name = 'other-window';
  const copy = preloadCopy(join(scratch, name, 'user-data'), packagePreload(name));
  const gw = await planGateway();
  gateways.push(gw);
  const [first, second] = [windowAtPage(), windowAtPage()];
  const detach = [attachDesktopBridge(gw.gateway, first), attachDesktopBridge(gw.gateway, second)]; // the second is the human
  try {
    for (const window of [first, second]) {
      window.startNavigation();
      window.reload();
    }
    const root = gw.gateway.transport();
    const waiting = root.invoke('agent', plan({ approve: { kind: 'exec', command_or_path: 'make one' } }));
    const shown = await second.sentOn<PendingApproval>('chatty:approval', (view) => view.commandOrPath === 'make one');
    mkdirSync(join(scratch, name, 'agents'));
    agentWritesThroughLink(copy, join(scratch, name, 'agents')); // both pages may have read it (a renderer started again)
    await assert.rejects(new StandInIpcMain().invoke('chatty:snapshot', first, first.mainFrame), /refused chatty:snapshot/);
    // The second window made no call: it is judged all the same, at once.
    const withdrawn = second.sent.find((sent) => sent.channel === 'chatty:withdrawn' && (sent.payload as Withdrawn).requestId === shown.requestId);
    assert.match((withdrawn?.payload as Withdrawn | undefined)?.reason ?? 'nothing withdrawn', /the window's preload copy .* was changed by someone else/);
    await waiting.catch(() => {});
    const next = root.invoke('agent', plan({ approve: { kind: 'exec', command_or_path: 'make two' } }));
    const where = await Promise.race([next.then(() => 'ended', () => 'ended'), second.sentOn('chatty:approval', (view: PendingApproval) => view.commandOrPath === 'make two').then(() => 'sent to the second window')]);
    assert.equal(where, 'ended', 'asked of nobody (denied at once), not of a page that may run the agent\'s script');
  } finally {
    for (const off of detach) off();
  }
});

test('preloadCopy made again (a second window\'s) counts a change it writes over: the open window that may have run it is refused', async () => {
  const { userData, copy, workspace, window, detach } = await bridgedWindow('second-window');
  try {
    window.startNavigation();
    window.reload(); // checked: untouched
    rmSync(agentWritesThroughLink(copy, workspace)); // then the renderer reads the agent's bytes
    assert.equal(preloadCopy(userData, join(scratch, 'second-window', 'package', 'index.cjs')), copy, "the app's second window");
    await refusedUntilReloaded(window);
  } finally {
    detach();
  }
});

test('a window whose page loaded before its bridge was attached, from a copy changed before, is not answered until it loads again', async () => {
  // The window's page loaded already, after the write: Electron read the agent's bytes.
  const { window, detach } = await bridgedWindow('late-attach', agentWritesThroughLink);
  try {
    await refusedUntilReloaded(window);
  } finally {
    detach();
  }
});

test("a window whose page loaded before its bridge was attached, its copy linked and written, put back to the nanosecond and removed with its folder, is not answered: no bridge being there then does not make it no change", async () => {
  // 753067d let such a copy go (no change) while no bridge was attached, as if no page could have
  // run it; a page loaded before its bridge had, and was answered once its bridge was attached.
  const { window, detach } = await bridgedWindow('late-attach-gone', (copy, workspace) => {
    const { mtimeNs } = statSync(copy, { bigint: true });
    const notes = agentWritesThroughLink(copy, workspace); // the page, loaded, reads these bytes
    writeFileSync(notes, PRELOAD);
    chmodSync(notes, 0o400);
    execFileSync('touch', ['-d', `@${mtimeNs / 1_000_000_000n}.${String(mtimeNs % 1_000_000_000n).padStart(9, '0')}`, notes]);
    rmSync(notes);
    rmSync(dirname(copy), { recursive: true });
    preloadCopy(join(scratch, 'late-attach-gone', 'user-data-2'), join(scratch, 'late-attach-gone', 'package', 'index.cjs')); // the app's second window
  });
  try {
    await refusedUntilReloaded(window);
  } finally {
    detach();
  }
});

test("a window whose page loaded before its bridge was attached, from a copy changed before, is judged at the attach: nothing the root asks is sent to it, and it is told it is refused", { timeout: 180_000 }, async () => {
  // Judged only at its first call or load before: the root's approval was sent to the page that may
  // run the agent's script and waited there, and the page was not told (chatty:refused).
  const name = 'late-attach-events';
  const copy = preloadCopy(join(scratch, name, 'user-data'), packagePreload(name));
  const gw = await planGateway();
  gateways.push(gw);
  mkdirSync(join(scratch, name, 'agents'));
  agentWritesThroughLink(copy, join(scratch, name, 'agents')); // then the window's page loads: Electron reads these bytes
  const window = windowAtPage();
  const detach = attachDesktopBridge(gw.gateway, window);
  try {
    const refused = window.sent.filter((sent) => sent.channel === 'chatty:refused');
    assert.equal(refused.length, 1, 'the page is told at the attach');
    assert.match((refused[0]?.payload as { reason: string }).reason, /the window's preload copy .* was changed by someone else/);
    const next = gw.gateway.transport().invoke('agent', plan({ approve: { kind: 'exec', command_or_path: 'make it' } }));
    const where = await Promise.race([next.then(() => 'ended', () => 'ended'), window.sentOn('chatty:approval', (view: PendingApproval) => view.commandOrPath === 'make it').then(() => 'sent to the page')]);
    assert.equal(where, 'ended', "asked of nobody (denied at once), not of a page that may run the agent's script");
    await refusedUntilReloaded(window);
  } finally {
    detach();
  }
});

test('a load with the copy untouched writes nothing: navigations started in a loop (even ones will-navigate refuses) cost a stat and a small read each, not a new file', async () => {
  const { copy, window, detach } = await bridgedWindow('untouched');
  try {
    const before = statSync(copy, { bigint: true });
    for (let i = 0; i < 200; i++) window.startNavigation('https://example.com/');
    const now = statSync(copy, { bigint: true });
    assert.equal(now.ino, before.ino, 'the same file');
    assert.equal(now.ctimeNs, before.ctimeNs, 'not written, not renamed');
  } finally {
    detach();
  }
});

test("a copy that is gone (an earlier launch's userData removed, its windows closed) runs nothing: no later window is refused for it, and the next load writes it again; removed while a bridged window is open, it refuses that page until it loads again", async () => {
  const elsewhere = join(scratch, 'gone-elsewhere');
  const other = preloadCopy(join(elsewhere, 'user-data'), packagePreload('gone-elsewhere'));
  rmSync(join(elsewhere, 'user-data'), { recursive: true }); // no bridge attached: no page could have run it
  const { window, detach } = await bridgedWindow('gone');
  try {
    window.startNavigation();
    window.reload();
    assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), 'answered');
    assert.equal(readFileSync(other, 'utf8'), PRELOAD, 'written again at the load');
    // Now removed with its folder while this window is bridged: nothing tells it from the agent's
    // bytes put back and the folder removed, so the page is refused until it loads again.
    rmSync(join(elsewhere, 'user-data'), { recursive: true });
    await refusedUntilReloaded(window);
  } finally {
    detach();
  }
});

test('a copy linked and written (the renderer reading those bytes), then moved or removed from its name, is a change: the page that may have run it is refused', async () => {
  /** The copy's bytes, mode and mtime put back as written (touch -d to the nanosecond, `mtimeNs` taken before the agent's write). */
  const putBack = (notes: string, mtimeNs: bigint): void => {
    writeFileSync(notes, PRELOAD);
    chmodSync(notes, 0o400);
    execFileSync('touch', ['-d', `@${mtimeNs / 1_000_000_000n}.${String(mtimeNs % 1_000_000_000n).padStart(9, '0')}`, notes]);
    assert.equal(statSync(notes, { bigint: true }).mtimeNs, mtimeNs);
  };
  const takeAway: Record<string, (copy: string, workspace: string, notes: string, mtimeNs: bigint) => void> = {
    'moved into the workspace (mv <copy> moved.cjs)': (copy, workspace) => renameSync(copy, join(workspace, 'moved.cjs')),
    'removed, the link too (rm <copy> notes.cjs)': (copy, _workspace, notes) => {
      rmSync(copy);
      rmSync(notes);
    },
    // All but the ctime put back as written (touch -d to the nanosecond), then both names removed:
    // only that the copy alone was taken from its folder tells.
    'its bytes, mode and mtime put back, then removed': (copy, _workspace, notes, mtimeNs) => {
      putBack(notes, mtimeNs);
      rmSync(copy);
      rmSync(notes);
    },
    // The same, and the copy's folder removed too (rm -r <userData>/chatty-preload): only the ctime,
    // which the unlink moves, could tell it from an earlier launch's userData removed.
    'its bytes, mode and mtime put back, then removed with its folder': (copy, _workspace, notes, mtimeNs) => {
      putBack(notes, mtimeNs);
      rmSync(notes);
      rmSync(dirname(copy), { recursive: true });
    },
  };
  for (const [how, away] of Object.entries(takeAway)) {
    const { copy, workspace, window, detach } = await bridgedWindow(`taken-away-${Object.keys(takeAway).indexOf(how)}`);
    try {
      window.startNavigation(); // renewed
      const { mtimeNs } = statSync(copy, { bigint: true }); // as written
      const notes = agentWritesThroughLink(copy, workspace);
      away(copy, workspace, notes, mtimeNs); // after Electron read the agent's bytes
      window.reload();
      await assert.rejects(new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), /refused chatty:snapshot: the window's preload copy/, `${how}: the page is refused`);
      window.startNavigation(); // a load writes the copy again: answered
      window.reload();
      assert.equal(readFileSync(copy, 'utf8'), PRELOAD);
      assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), how);
    } finally {
      detach();
    }
  }
});

test('a copy that cannot be renewed at a load leaves the window nobody to ask: approvals are not sent to a page whose preload was not checked', async () => {
  const { userData, window, lines, detach } = await bridgedWindow('renew-fails');
  try {
    chmodSync(join(userData, 'chatty-preload'), 0o770); // open to the group: no longer a folder to trust
    window.startNavigation();
    window.reload();
    assert.ok(lines.some((line) => /cannot renew the preload copy .*writable by its group/.test(line)), lines.join(' | '));
    await assert.rejects(new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame), /refused chatty:snapshot: the window's preload could not be checked \(.*writable by its group.*\), so the page is not answered: put right what that names, then reload the window/, 'the page is not answered');
    chmodSync(join(userData, 'chatty-preload'), 0o700);
    window.startNavigation(); // renewed at the next load: the page is answered again
    window.reload();
    assert.ok(await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame));
  } finally {
    chmodSync(join(userData, 'chatty-preload'), 0o700);
    detach();
  }
});

test('a preload that is a link, or a copy folder that is a link or open to others, is refused, saying why', () => {
  const source = packagePreload('refusals');
  const linked = join(scratch, 'refusals', 'linked.cjs');
  symlinkSync(source, linked);
  assert.throws(() => preloadCopy(join(scratch, 'refusals', 'a'), linked), /preloadCopy: the package's preload .*linked\.cjs cannot be copied: .*link/);
  const elsewhere = join(scratch, 'refusals', 'elsewhere');
  mkdirSync(elsewhere, { mode: 0o700 });
  mkdirSync(join(scratch, 'refusals', 'b'));
  symlinkSync(elsewhere, join(scratch, 'refusals', 'b', 'chatty-preload'));
  assert.throws(() => preloadCopy(join(scratch, 'refusals', 'b'), source), /is not a folder \(a link\?\)/);
  mkdirSync(join(scratch, 'refusals', 'c', 'chatty-preload'), { recursive: true });
  chmodSync(join(scratch, 'refusals', 'c', 'chatty-preload'), 0o770);
  assert.throws(() => preloadCopy(join(scratch, 'refusals', 'c'), source), /is writable by its group/);
});

test("the copy folder is kept from the agents: a bridge on a gateway working in it or around it is refused, and so is a copy made in a bridged workspace", async () => {
  const source = packagePreload('workspace');
  const userData = join(scratch, 'workspace', 'user-data');
  preloadCopy(userData, source);
  const around = await startGateway(undefined, { broker: { root: { workspaceRoot: userData } } });
  gateways.push(around);
  assert.throws(() => attachDesktopBridge(around.gateway, windowAtPage()), /the preload copy folder .* and the agents' workspace .* overlap/);

  const workspace = join(scratch, 'workspace', 'agents');
  mkdirSync(workspace);
  const bridged = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace } } });
  gateways.push(bridged);
  const detach = attachDesktopBridge(bridged.gateway, windowAtPage());
  try {
    assert.throws(() => preloadCopy(join(workspace, 'user-data'), source), /the preload copy folder .* and the agents' workspace .* overlap/);
  } finally {
    detach();
  }
});

test('a folder planted at the copy\'s name is a refusal saying so, leaving no temp file, at every launch', () => {
  const source = packagePreload('planted');
  const userData = join(scratch, 'planted', 'user-data');
  const name = `index-${createHash('sha256').update(PRELOAD).digest('hex')}.cjs`;
  mkdirSync(join(userData, 'chatty-preload', name, 'inside'), { recursive: true, mode: 0o700 });
  for (let launch = 0; launch < 2; launch++) {
    assert.throws(() => preloadCopy(userData, source), new RegExp(`preloadCopy: cannot put the copy at .*${name}: a folder is in the way \\(EISDIR\\)`));
  }
  assert.deepEqual(readdirSync(join(userData, 'chatty-preload')), [name], 'no temp file left');
});

test('copies of earlier preloads (an upgrade, another source) and temp files left by a crash are removed at launch', () => {
  const userData = join(scratch, 'upgrades', 'user-data');
  const copies: string[] = [];
  for (let version = 1; version <= 3; version++) {
    const source = join(packagePreload(`upgrades-${version}`));
    writeFileSync(source, `${PRELOAD}// version ${version}\n`);
    copies.push(preloadCopy(userData, source));
    writeFileSync(join(userData, 'chatty-preload', `.index-1234-${'0'.repeat(15)}${version}.tmp`), 'a crash mid-copy');
  }
  writeFileSync(join(userData, 'chatty-preload', 'notes.txt'), 'not a copy: kept');
  preloadCopy(userData, join(scratch, 'upgrades-3', 'package', 'index.cjs'));
  assert.deepEqual(readdirSync(join(userData, 'chatty-preload')).sort(), [basename(copies[2] ?? ''), 'notes.txt'].sort());
});

test('a copy folder of this user\'s that others may read is made owner-only', () => {
  const source = packagePreload('readable');
  const dir = join(scratch, 'readable', 'user-data', 'chatty-preload');
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  preloadCopy(join(scratch, 'readable', 'user-data'), source);
  assert.equal((statSync(dir).mode & 0o777).toString(8), '700');
});

test('a folder above the copy folder that another user could write, or that is theirs, is refused, naming it', () => {
  const source = packagePreload('folders');
  // userData writable by others (no sticky bit): they rename chatty-preload away and plant theirs.
  const open = join(scratch, 'open-user-data');
  mkdirSync(open);
  chmodSync(open, 0o777);
  assert.throws(() => preloadCopy(open, source), new RegExp(`preloadCopy: ${open} is writable by others \\(mode 777\\)`));
  // Higher up, and group-writable.
  const above = join(scratch, 'group-above');
  mkdirSync(join(above, 'config', 'app'), { recursive: true });
  chmodSync(above, 0o775);
  assert.throws(() => preloadCopy(join(above, 'config', 'app'), source), new RegExp(`preloadCopy: ${above} is writable by its group`));
  // Another user's userData (uid 65534; this needs root, as the owner-only tests do).
  const theirs = join(scratch, 'their-user-data');
  mkdirSync(theirs);
  chownSync(theirs, 65534, 65534);
  chmodSync(theirs, 0o755);
  assert.throws(() => preloadCopy(theirs, source), new RegExp(`preloadCopy: ${theirs} is owned by another user \\(uid 65534\\)`));
  // A sticky folder others write (/tmp's kind) is not in the way: nobody there may rename what is not theirs.
  const sticky = join(scratch, 'sticky');
  mkdirSync(join(sticky, 'mine'), { recursive: true });
  chmodSync(sticky, 0o1777);
  assert.match(preloadCopy(join(sticky, 'mine'), source), /mine\/chatty-preload\/index-[0-9a-f]{64}\.cjs$/);
});

test("the package's out/preload leading out of the package's folder (into the agents' workspace) is refused, not copied", async () => {
  // A copy of this package's main/ whose out/preload is a link to a build kept in the workspace: the
  // default source is then the agent's to write, and its next plain write the next launch's preload.
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const pkg = join(scratch, 'package');
  for (const part of ['main', 'package.json', 'tsconfig.json']) cpSync(join(root, part), join(pkg, part), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(pkg, 'node_modules'));
  const build = join(scratch, 'agents', 'build');
  mkdirSync(build, { recursive: true });
  writeFileSync(join(build, 'index.cjs'), PRELOAD);
  mkdirSync(join(pkg, 'out'));
  symlinkSync(build, join(pkg, 'out', 'preload'));
  const copied = (await import(join(pkg, 'main', 'app', 'preload-copy.ts'))) as { preloadCopy: typeof preloadCopy };
  assert.throws(
    () => copied.preloadCopy(join(scratch, 'package-user-data')),
    new RegExp(`preloadCopy: this package's out/preload leads out of its folder ${pkg} \\(to ${build}\\)`),
  );
});

test('a source lying in a bridged workspace is refused, and a bridge on a workspace around a source already copied is too', async () => {
  const workspace = join(scratch, 'bridged');
  mkdirSync(join(workspace, 'build'), { recursive: true });
  writeFileSync(join(workspace, 'build', 'index.cjs'), AGENT);
  const linked = join(scratch, 'linked-build');
  symlinkSync(join(workspace, 'build'), linked); // a link on the way: its real folder is what counts
  const bridged = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace } } });
  gateways.push(bridged);
  const detach = attachDesktopBridge(bridged.gateway, windowAtPage());
  try {
    for (const from of [join(workspace, 'build', 'index.cjs'), join(linked, 'index.cjs')]) {
      assert.throws(() => preloadCopy(join(scratch, 'bridged-user-data'), from), /the preload source folder .*bridged\/build and the agents' workspace .* overlap/, from);
    }
  } finally {
    detach();
  }

  const later = join(scratch, 'later');
  mkdirSync(join(later, 'build'), { recursive: true });
  writeFileSync(join(later, 'build', 'index.cjs'), PRELOAD);
  preloadCopy(join(scratch, 'later-user-data'), join(later, 'build', 'index.cjs'));
  const around = await startGateway(undefined, { broker: { root: { workspaceRoot: later } } });
  gateways.push(around);
  assert.throws(() => attachDesktopBridge(around.gateway, windowAtPage()), /the preload source folder .*later\/build and the agents' workspace .* overlap/);
});

test("a page refused at the attach is sent no capability request either: the desk's requests go to it only once its load is answered", { timeout: 180_000 }, async () => {
  // The attach sent the desk's waiting requests (attachWindow) before it judged the page: a page
  // that may run the agent's script was shown them, and never told they were withdrawn.
  const name = 'late-attach-grants';
  const copy = preloadCopy(join(scratch, name, 'user-data'), packagePreload(name));
  const gw = await planGateway();
  gateways.push(gw);
  mkdirSync(join(scratch, name, 'agents'));
  agentWritesThroughLink(copy, join(scratch, name, 'agents'));
  const desk = new PluginGrants();
  const waiting = desk.ask(grantRequest({ plugin: 'asked-before-attach' }));
  const window = windowAtPage();
  const detach = attachDesktopBridge(gw.gateway, window, { grants: desk });
  try {
    assert.deepEqual(window.sent.map((sent) => sent.channel), ['chatty:refused'], 'told it is refused, and sent nothing else');
    window.startNavigation();
    window.reload();
    const snapshot = (await new StandInIpcMain().invoke('chatty:snapshot', window, window.mainFrame)) as Snapshot;
    assert.deepEqual(snapshot.grants.map((g) => g.plugin), ['asked-before-attach'], 'the page loaded again finds it');
  } finally {
    detach();
    desk.withdrawAll();
    assert.equal(await waiting, 'withdrawn');
  }
});

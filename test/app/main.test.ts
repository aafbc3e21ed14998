// The Electron shell's own wiring: the real main/app/main.ts and electron-bridge.ts, run on plain
// Node against the stand-in `electron` of electron-stand-in/ (resolved by hooks.mjs), with a real
// gateway, the bundled agents as real worker processes, and electron-log writing a real file. The
// test plays Electron: it fires `ready`, the webContents events and the IPC calls, and reads what
// main did. Each test runs a fresh copy of main.ts (imported under its own query string).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { APP_PAGE_URL } from '../../main/app/app-protocol.js';
import { EVENT_CHANNELS, INVOKE_CHANNELS, type GatewayInfo, type ModuleList, type PendingApproval, type Snapshot, type TaskUpdate } from '../../main/app/bridge/contract.js';
import { QUIT_SIGNALS } from '../../main/app/lifecycle.js';
import { CONTENT_SECURITY_POLICY, openAppWindow } from '../../main/app/window-options.js';
import { until } from '../broker/helpers.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { BrowserWindow, resetElectron, StandInEvent, StandInFrame, StandInWebContents, type StandIn } from './electron-stand-in/electron.js';

register('./electron-stand-in/hooks.mjs', import.meta.url);

const repo = fileURLToPath(new URL('../../', import.meta.url));
/** What main.ts adds to the process, taken off again when a test's copy of it is done. */
const PROCESS_EVENTS = [...QUIT_SIGNALS, 'uncaughtException', 'unhandledRejection'] as const;
type ProcessEvent = (typeof PROCESS_EVENTS)[number];
let boots = 0;

interface Booted {
  electron: StandIn;
  home: string;
  /** electron-log's file, `<logs>/main.log`, as it is now. */
  log(): string;
  /** The listener main.ts put on `process` for `event`. */
  added(event: ProcessEvent): ((...args: unknown[]) => void)[];
  /** Quits (unless the app is gone already) and puts the process back as it was. */
  dispose(): Promise<void>;
}

/** Runs a fresh main.ts on a fresh stand-in Electron, in a scratch home (no plugins, a plain workspace). */
async function boot(options: { lock?: boolean; env?: Record<string, string> } = {}): Promise<Booted> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-main-')));
  for (const dir of ['modules', 'workspace']) mkdirSync(join(home, dir));
  const env: Record<string, string> = { CHATTY_MODULES_DIR: join(home, 'modules'), CHATTY_RUNTIME_DIR: join(home, 'run'), CHATTY_WORKSPACE: join(home, 'workspace'), ...options.env };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const electron = resetElectron({ lock: options.lock ?? true, paths: { userData: join(home, 'user-data'), logs: join(home, 'logs') } });
  const listeners = (event: ProcessEvent): Function[] => process.listeners(event as NodeJS.Signals);
  const earlier = new Map(PROCESS_EVENTS.map((e) => [e, listeners(e)]));
  await import(`../../main/app/main.ts?boot=${++boots}`);
  const added = (event: ProcessEvent): ((...args: unknown[]) => void)[] => listeners(event).filter((l) => !earlier.get(event)?.includes(l)) as ((...args: unknown[]) => void)[];
  const logFile = join(home, 'logs', 'main.log');
  return {
    electron,
    home,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    added,
    async dispose() {
      if (electron.app.exitCode === undefined) electron.app.quit();
      await electron.app.gone;
      for (const event of PROCESS_EVENTS) for (const listener of added(event)) process.removeListener(event as NodeJS.Signals, listener);
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Fires `ready` and waits for the window's page to be loaded. */
async function launch(booted: Booted): Promise<BrowserWindow> {
  booted.electron.app.ready();
  return booted.electron.windowLoaded;
}

/** An IPC call from the window's top frame (the only sender main answers). */
function fromTop(electron: StandIn, window: BrowserWindow, channel: string, payload?: unknown): Promise<unknown> {
  return electron.ipcMain.invoke(channel, window.webContents, window.webContents.mainFrame, payload);
}

const ended = (taskId: string) => (u: TaskUpdate) => u.type === 'ended' && u.taskId === taskId;

test('a second instance quits at once and sets nothing up', async () => {
  const booted = await boot({ lock: false });
  try {
    const { app, protocol, ipcMain, windows } = booted.electron;
    assert.equal(app.lockRequests, 1);
    assert.equal(app.quits, 1);
    assert.equal(app.whenReadyCalls, 0, 'it never waits for ready');
    assert.deepEqual(protocol.privileged, []);
    assert.deepEqual(app.eventNames(), []);
    assert.equal(ipcMain.handlers.size, 0);
    assert.deepEqual(windows, []);
    assert.deepEqual(booted.added('SIGTERM'), []);
  } finally {
    await booted.dispose();
  }
});

// Every wait here is for something main does at once or within a worker's start; a wiring that is
// missing fails the test at its timeout rather than hanging the run.
const WITHIN = { timeout: 60_000 };

describe('the first instance (one main.ts, launched once)', WITHIN, () => {
  let booted: Booted;
  let electron: StandIn;
  let window: BrowserWindow;
  let contents: StandInWebContents;

  before(async () => {
    booted = await boot();
    electron = booted.electron;
    assert.equal(electron.app.lockRequests, 1);
    // Before ready: the app: scheme is privileged (Electron allows that only then).
    assert.deepEqual(electron.protocol.privileged, [{ schemes: [{ scheme: 'app', privileges: { standard: true, secure: true } }], beforeReady: true }]);
    assert.deepEqual(electron.windows, [], 'no window before ready');
    window = await launch(booted);
    contents = window.webContents;
  });

  after(async () => {
    await booted?.dispose();
  });

  test('the window: the web preferences openAppWindow gives, a copy of the built preload under userData, the app page, shown once painted', () => {
    assert.equal(electron.windows.length, 1);
    // Not the package's own file, which Electron would read again at every load (a hard link to it
    // written by an agent would be the next load's preload): a copy made at launch, by its digest.
    const built = readFileSync(join(repo, 'out', 'preload', 'index.cjs'));
    const preload = join(booted.home, 'user-data', 'chatty-preload', `index-${createHash('sha256').update(built).digest('hex')}.cjs`);
    assert.deepEqual(readFileSync(preload), built);
    const expected = openAppWindow(
      class {
        constructor(readonly options: object) {}
      },
      preload,
    ).options;
    assert.deepEqual(window.options, expected);
    assert.equal(window.loadedUrl, APP_PAGE_URL);
    assert.equal(window.shown, false, 'not shown before it is painted');
    window.emit('ready-to-show');
    assert.equal(window.shown, true);
  });

  test("the window's webContents, and any other that appears, cannot navigate, redirect, open windows or attach webviews", () => {
    const other = new StandInWebContents();
    electron.app.emit('web-contents-created', new StandInEvent(), other);
    for (const target of [contents, other]) {
      const navigation = new StandInEvent();
      target.emit('will-navigate', navigation, 'https://example.com/');
      assert.equal(navigation.defaultPrevented, true);
      const redirect = new StandInEvent();
      target.emit('will-redirect', redirect, 'https://example.com/r');
      assert.equal(redirect.defaultPrevented, true);
      const webview = new StandInEvent();
      target.emit('will-attach-webview', webview, {}, {});
      assert.equal(webview.defaultPrevented, true);
      assert.deepEqual(target.windowOpenHandler?.({ url: 'https://example.com/w' }), { action: 'deny' });
    }
    // Each refusal is in electron-log's file.
    const log = booted.log();
    assert.match(log, /security: refused navigation to https:\/\/example\.com\//);
    assert.match(log, /security: refused a redirect to https:\/\/example\.com\/r/);
    assert.match(log, /security: refused to attach a webview/);
    assert.match(log, /security: refused to open a window: https:\/\/example\.com\/w/);
  });

  test('the default session: every permission refused but the page writing to the clipboard, downloads cancelled', () => {
    const session = electron.session.defaultSession;
    assert.ok(session.permissionRequestHandler && session.permissionCheckHandler, 'both permission handlers are set');
    const request = session.permissionRequestHandler as unknown as (c: unknown, p: string, cb: (g: boolean) => void, d: object) => void;
    const check = session.permissionCheckHandler as unknown as (c: unknown, p: string, o: string, d: object) => boolean;
    const top = { requestingUrl: APP_PAGE_URL, isMainFrame: true };
    const answers: boolean[] = [];
    request(contents, 'media', (g) => answers.push(g), top);
    request(contents, 'clipboard-sanitized-write', (g) => answers.push(g), top);
    request(contents, 'clipboard-sanitized-write', (g) => answers.push(g), { requestingUrl: 'https://evil.example/', isMainFrame: true });
    assert.deepEqual(answers, [false, true, false]);
    assert.equal(check(contents, 'notifications', 'app://chatty', top), false);
    assert.equal(check(contents, 'clipboard-sanitized-write', 'app://chatty', top), true);
    const download = new StandInEvent();
    session.emit('will-download', download, { getURL: () => 'https://example.com/x.sh' });
    assert.equal(download.defaultPrevented, true);
    assert.match(booted.log(), /security: refused the permission request: media/);
    assert.match(booted.log(), /security: refused a download: https:\/\/example\.com\/x\.sh/);
  });

  test('the app: protocol serves the page with the CSP header, and nothing outside its allow-list', async () => {
    const handler = electron.session.defaultSession.protocol.handlers.get('app');
    assert.ok(handler, 'app: is handled on the default session');
    const page = await handler(new Request(APP_PAGE_URL));
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    assert.equal(await page.text(), readFileSync(join(repo, 'renderer-demo', 'index.html'), 'utf8'));
    for (const url of ['app://chatty/package.json', 'app://chatty/renderer-demo/app.ts', 'app://chatty/../../etc/passwd']) {
      const refused = await handler(new Request(url));
      assert.equal(refused.status, 404, url);
    }
    assert.equal((await handler(new Request(APP_PAGE_URL, { method: 'POST', body: 'x' }))).status, 405);
    assert.match(booted.log(), /app protocol: 404 app:\/\/chatty\/package\.json/);
  });

  test("the bridge answers the window's top frame only: not a sub-frame at the page's URL, not another webContents, not a frameless call", async () => {
    // The handlers are the window's own (webContents.ipc): another webContents reaches none of them.
    assert.deepEqual([...contents.ipc.handlers.keys()].sort(), Object.values(INVOKE_CHANNELS).sort());
    assert.equal(electron.ipcMain.handlers.size, 0);
    const info = (await fromTop(electron, window, INVOKE_CHANNELS.gatewayInfo)) as GatewayInfo;
    assert.equal(info.socketPath.startsWith(join(booted.home, 'run')), true, info.socketPath);
    const other = new StandInWebContents();
    other.mainFrame.url = APP_PAGE_URL;
    const refusals: [string, StandInWebContents, StandInFrame | null, RegExp][] = [
      ['a sub-frame at the page URL', contents, new StandInFrame(APP_PAGE_URL), /is not the trusted window/],
      ['another webContents on the page URL', other, other.mainFrame, /No handler registered/],
      ["another webContents naming the window's frame", other, contents.mainFrame, /No handler registered/],
      ['no frame', contents, null, /is not the trusted window/],
    ];
    for (const [what, sender, frame, refusal] of refusals) {
      await assert.rejects(electron.ipcMain.invoke(INVOKE_CHANNELS.gatewayInfo, sender, frame), refusal, what);
    }
    assert.match(booted.log(), /bridge: refused chatty:gateway-info: sender app:\/\/chatty\/renderer-demo\/index\.html is not the trusted window/);
    // Events reach the window: a request on the socket is an edge row sent to it.
    const row = contents.sentOn<{ path: string }>(EVENT_CHANNELS.edgeRow, (r) => r.path === '/mcp/nothing-here');
    await unixRequest(info.socketPath, { path: '/mcp/nothing-here' });
    await row;
  });

  /** Starts `exec <command>` on local-coder from the window and waits for its approval to be sent. */
  async function waitingApproval(command: string): Promise<string> {
    const { taskId } = (await fromTop(electron, window, INVOKE_CHANNELS.startTask, { agent: 'local-coder', prompt: `exec ${command}` })) as { taskId: string };
    await contents.sentOn<PendingApproval>(EVENT_CHANNELS.approval, (a) => a.taskId === taskId);
    return taskId;
  }

  /** The reset is immediate: nothing waits any more, before the task has even heard. */
  async function nothingWaits(): Promise<void> {
    const snapshot = (await fromTop(electron, window, INVOKE_CHANNELS.snapshot)) as Snapshot;
    assert.deepEqual([snapshot.approvals, snapshot.questions], [[], []]);
  }

  async function deniedBecause(taskId: string): Promise<string[]> {
    await contents.sentOn(EVENT_CHANNELS.task, ended(taskId));
    const snapshot = (await fromTop(electron, window, INVOKE_CHANNELS.snapshot)) as Snapshot;
    return snapshot.tasks.find((t) => t.taskId === taskId)?.entries.filter((e) => e.kind === 'verdict').map((e) => e.text) ?? [];
  }

  test("a reload of the top frame denies what waits once it commits; a navigation only started (then refused), in-page or in a sub-frame does not; so does a crash", async () => {
    const reloaded = await waitingApproval('echo reloaded');
    // Electron fires did-start-navigation before will-navigate may cancel it: starting is not reloading.
    contents.emit('did-start-navigation', new StandInEvent({ url: 'https://elsewhere.example/', isMainFrame: true, isSameDocument: false }));
    contents.emit('did-navigate-in-page', new StandInEvent(), `${APP_PAGE_URL}#tasks`, true);
    contents.emit('did-frame-navigate', new StandInEvent(), 'app://chatty/renderer-demo/other.html', 200, 'OK', false);
    const still = (await fromTop(electron, window, INVOKE_CHANNELS.snapshot)) as Snapshot;
    assert.deepEqual(still.approvals.map((a) => a.taskId), [reloaded], 'still waiting');
    contents.emit('did-navigate', new StandInEvent(), APP_PAGE_URL, 200, 'OK');
    await nothingWaits();
    assert.deepEqual(await deniedBecause(reloaded), ['denied echo reloaded: the window was reloaded']);

    const crashed = await waitingApproval('echo crashed');
    contents.emit('render-process-gone', new StandInEvent(), { reason: 'crashed', exitCode: 139 });
    await nothingWaits();
    // A crashed page is sent nothing (its task's end neither) until it is loaded again.
    contents.emit('did-navigate', new StandInEvent(), APP_PAGE_URL, 200, 'OK');
    const snapshot = (await fromTop(electron, window, INVOKE_CHANNELS.snapshot)) as Snapshot;
    assert.deepEqual(snapshot.tasks.find((t) => t.taskId === crashed)?.entries.filter((e) => e.kind === 'verdict').map((e) => e.text), ['denied echo crashed: the window crashed']);
  });

  test('the application menu has no Reload or Force Reload (a reload denies what waits), nor a key for one', () => {
    const menu = electron.applicationMenu;
    assert.ok(menu, 'main sets its own menu in place of the default one');
    const items = (list: readonly object[]): Record<string, unknown>[] =>
      list.flatMap((item) => {
        const entry = item as Record<string, unknown>;
        return [entry, ...(Array.isArray(entry['submenu']) ? items(entry['submenu'] as object[]) : [])];
      });
    const all = items(menu.template);
    assert.ok(all.some((i) => i['role'] === 'editMenu'), 'the text fields keep their edit shortcuts');
    // Electron's viewMenu role holds Reload and Force Reload: it must not be used either.
    assert.deepEqual(all.filter((i) => ['reload', 'forceReload', 'viewMenu'].includes(String(i['role']))), []);
    assert.deepEqual(all.filter((i) => /^(CmdOrCtrl|CommandOrControl|Ctrl|Cmd)\+(Shift\+)?R$|^F5$/i.test(String(i['accelerator'] ?? ''))), []);
  });

  test('a second launch brings the window forward', () => {
    window.minimized = true;
    window.shown = false;
    window.focused = false;
    electron.app.emit('second-instance', new StandInEvent(), ['chatty'], '/');
    assert.deepEqual([window.minimized, window.shown, window.focused], [false, true, true]);
  });

  test('the window closing denies what waits, and nothing more is sent to it', async () => {
    await waitingApproval('echo closed');
    const sentBefore = contents.sent.length;
    contents.destroy();
    // Nothing reaches the closed window: the denial is read from main's side, in the approvals'
    // audit log (nobody answered: `no-root`, never a person's `denied`).
    const audit = join(booted.home, 'run', 'approvals.log');
    const row = (): { verdict?: string; by?: string } | undefined =>
      (existsSync(audit) ? readFileSync(audit, 'utf8') : '').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { command_or_path: string; verdict: string; by: string }).find((r) => r.command_or_path === 'echo closed');
    await until(() => row() !== undefined, "the closed window's approval decided");
    assert.deepEqual([row()?.verdict, row()?.by], ['denied', 'no-root']);
    assert.equal(contents.sent.length, sentBefore, 'nothing was sent after destroyed');
    // The bridge ended with its window (it hears the gateway no more): a call naming it is refused.
    await assert.rejects(fromTop(electron, window, INVOKE_CHANNELS.snapshot), /the bridge is closed/);
  });

});

/** Launches, and returns the gateway's socket path. */
async function launched(booted: Booted): Promise<string> {
  const window = await launch(booted);
  return ((await fromTop(booted.electron, window, INVOKE_CHANNELS.gatewayInfo)) as GatewayInfo).socketPath;
}

test('closing the last window quits, once the gateway is stopped and the bridge unbound', WITHIN, async () => {
  const booted = await boot();
  try {
    const { app, ipcMain } = booted.electron;
    const socketPath = await launched(booted);
    assert.ok(existsSync(socketPath));
    app.emit('window-all-closed');
    assert.equal(app.quits, 1, 'closing the last window quits');
    await app.gone;
    assert.equal(app.quits, 2, 'the first quit waited for the teardown, the second went through');
    assert.equal(existsSync(socketPath), false, 'the gateway stopped: its socket is removed');
    assert.equal(booted.electron.windows[0]?.webContents.ipc.handlers.size, 0, 'the bridge is unbound');
    assert.equal(ipcMain.handlers.size, 0);
    assert.match(booted.log(), /quitting: stopping the gateway[\s\S]*the gateway stopped; every child is reaped/);
  } finally {
    await booted.dispose();
  }
});

test('SIGINT, SIGTERM and SIGHUP quit the way closing does', WITHIN, async () => {
  const booted = await boot();
  try {
    const socketPath = await launched(booted);
    for (const signal of QUIT_SIGNALS) assert.equal(booted.added(signal).length, 1, signal);
    booted.added('SIGTERM')[0]?.('SIGTERM');
    assert.equal(booted.electron.app.quits, 1, 'the signal quits');
    await booted.electron.app.gone;
    assert.equal(existsSync(socketPath), false);
  } finally {
    await booted.dispose();
  }
});

test('a launch that fails is logged, stops what it started, and exits 1', WITHIN, async () => {
  const deep = join(tmpdir(), 'chatty-main-deep', 'd'.repeat(120));
  const booted = await boot({ env: { CHATTY_RUNTIME_DIR: deep } });
  try {
    booted.electron.app.ready();
    await booted.electron.app.gone;
    assert.equal(booted.electron.app.exitCode, 1);
    assert.deepEqual(booted.electron.windows, []);
    assert.match(booted.log(), /launch failed: /);
    assert.equal(existsSync(deep), false, 'nothing was made of the refused runtime directory');
  } finally {
    await booted.dispose();
  }
});

test("a launch whose agents' workspace holds the app's approvals and grants files (CHATTY_WORKSPACE=$HOME) is refused, saying so", WITHIN, async () => {
  const booted = await boot();
  try {
    // The boot's home, userData's parent, is the workspace: its approvals.json and plugin-grants.json are in it.
    process.env['CHATTY_WORKSPACE'] = booted.home; // read at launch; dispose() puts it back
    booted.electron.app.ready();
    await booted.electron.app.gone;
    assert.equal(booted.electron.app.exitCode, 1);
    assert.match(booted.log(), /launch failed: .*the agents' workspace .* holds the app's own file .*user-data\/approvals\.json/);
  } finally {
    await booted.dispose();
  }
});

test("a window refused for its preload is told where no page script reaches: main.ts's onRefused shows Electron's dialog, with the reason", WITHIN, async () => {
  const booted = await boot();
  try {
    const window = await launch(booted);
    const copy = (window.options['webPreferences'] as Record<string, unknown>)['preload'] as string;
    // Someone else's hard link to the copy, and a write through it (the page may run it from now on).
    const notes = join(booted.home, 'user-data', 'notes.cjs');
    linkSync(copy, notes);
    chmodSync(notes, 0o600);
    writeFileSync(notes, "/* someone else's */");
    await assert.rejects(fromTop(booted.electron, window, INVOKE_CHANNELS.snapshot), /refused chatty:snapshot: the window's preload copy/);
    assert.deepEqual(
      booted.electron.dialog.messageBoxes.map((box) => [box.window === window, box.options['type'], box.options['message'], /^the window's preload copy .* was changed by someone else/.test(String(box.options['detail']))]),
      [[true, 'warning', 'This window no longer answers the agents', true]],
    );
  } finally {
    await booted.dispose();
  }
});

test("main.ts gives the bridge the plugins' grant desk: a plugin asking for files waits for the page, and the page's Grant serves it", WITHIN, async () => {
  const modules = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-main-grant-')));
  writeModuleDir(modules, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component: await buildFixture('echo'), extra: { 'data/note.txt': 'a note' } });
  const booted = await boot({ env: { CHATTY_MODULES_DIR: modules } });
  try {
    const window = await launch(booted);
    const top = (channel: string, payload?: unknown): Promise<unknown> => fromTop(booted.electron, window, channel, payload);
    const { grants } = (await top(INVOKE_CHANNELS.snapshot)) as Snapshot;
    assert.deepEqual(grants.map((g) => [g.plugin, g.asks]), [['notes', [{ capability: 'file', detail: 'read files under ./data', reach: '' }]]]);
    const served = window.webContents.sentOn<ModuleList>(EVENT_CHANNELS.modules, (list) => list.modules.some((m) => m.name === 'notes'));
    await top(INVOKE_CHANNELS.answerGrant, { requestId: grants[0]!.requestId, decision: 'granted' });
    await served;
    assert.ok(readFileSync(join(booted.home, 'user-data', 'plugin-grants.json'), 'utf8').includes(grants[0]!.digest));
  } finally {
    await booted.dispose();
    rmSync(modules, { recursive: true, force: true });
  }
});

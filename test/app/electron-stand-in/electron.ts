// A stand-in for the `electron` module, for running the real main/app/main.ts (and the example
// app's main.js, test/package) on plain Node (hooks.mjs resolves `electron` here). Only the
// primitives those files touch, each doing the least Electron does: `app` (the single-instance lock, `whenReady`,
// `getPath`, `quit` with its cancellable `before-quit`, `exit`, events), `BrowserWindow` (its
// options kept, a webContents whose creation fires `app`'s `web-contents-created`, `loadURL`,
// `show`), `webContents` (events, `send` recorded, its main frame, its own `ipc`), `ipcMain` (the
// handlers kept; `invoke` reaches the sender's `webContents.ipc` handler first, as in Electron),
// `protocol.registerSchemesAsPrivileged`, `session.defaultSession` (its handlers kept, its
// `protocol.handle`d schemes), `Menu` (the application menu's template kept) and `dialog` (each
// `showMessageBox` kept). Nothing decides
// anything: the test fires the events and calls the handlers, and reads what main did.
//
// `resetElectron()` makes a fresh set; the exports are live bindings, so an imported main.ts sees
// the set of the test that imported it.
import { EventEmitter } from 'node:events';

/** An Electron event with `preventDefault`, and whether it was prevented. */
export class StandInEvent<T extends object = object> {
  defaultPrevented = false;
  constructor(readonly fields: T = {} as T) {
    Object.assign(this, fields);
  }
  preventDefault(): void {
    this.defaultPrevented = true;
  }
}

export class StandInFrame {
  constructor(public url: string) {}
}

/** Invoke handlers by channel: `ipcMain`, and each webContents' own `ipc` (which hears only it). */
export class StandInIpcHandlers {
  readonly handlers = new Map<string, (event: never, ...args: never[]) => unknown>();
  handle(channel: string, handler: (event: never, ...args: never[]) => unknown): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
}

/** A `webContents`: its events, what was sent to it, its window-open handler, its main frame, its `ipc`. */
export class StandInWebContents extends EventEmitter {
  readonly mainFrame = new StandInFrame('');
  readonly ipc = new StandInIpcHandlers();
  readonly sent: { channel: string; payload: unknown }[] = [];
  /** Test side: also hands each message sent to a page the test drives (a browser page, say). */
  onSend: ((channel: string, payload: unknown) => void) | undefined;
  windowOpenHandler: ((details: { url: string }) => unknown) | undefined;
  private destroyed = false;
  private crashed = false;
  private waiters: { channel: string; pred: (payload: unknown) => boolean; resolve: (payload: unknown) => void }[] = [];

  isDestroyed(): boolean {
    return this.destroyed;
  }
  isCrashed(): boolean {
    return this.crashed;
  }
  /** Test side: the page's renderer process died (`render-process-gone`); the window stays. */
  crash(): void {
    this.crashed = true;
    this.emit('render-process-gone', new StandInEvent(), { reason: 'crashed', exitCode: 139 });
  }
  /**
   * Test side: a navigation of the top frame (`isSameDocument` false: a reload, a load after a
   * crash) or of a sub-frame starts: `did-start-navigation`, with Electron's details and its
   * positional arguments. Electron runs the preload after it, for a new document of the top frame.
   */
  startNavigation(url = this.mainFrame.url, { isMainFrame = true, isSameDocument = false } = {}): void {
    this.emit('did-start-navigation', new StandInEvent({ url, isMainFrame, isSameDocument }), url, isSameDocument, isMainFrame, 1, 1);
  }
  /**
   * Test side: a navigation started was cancelled (will-navigate refused it, another superseded
   * it): Electron's `did-fail-provisional-load` with ERR_ABORTED (-3), and no `did-fail-load`.
   */
  cancelNavigation(url = this.mainFrame.url, { isMainFrame = true } = {}): void {
    this.emit('did-fail-provisional-load', new StandInEvent(), -3, 'ERR_ABORTED', url, isMainFrame, 1, 1);
  }
  /** Test side: the top frame committed a new document at its URL (a reload): `did-navigate`. */
  reload(): void {
    this.crashed = false;
    this.emit('did-navigate', new StandInEvent(), this.mainFrame.url, 200, 'OK');
  }
  /** Test side: the top frame committed a document at `url` (the app's own `loadURL`): `did-navigate`. */
  navigate(url: string): void {
    this.crashed = false;
    this.mainFrame.url = url;
    this.emit('did-navigate', new StandInEvent(), url, 200, 'OK');
  }
  getURL(): string {
    return this.mainFrame.url;
  }
  send(channel: string, payload: unknown): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    this.sent.push({ channel, payload });
    this.onSend?.(channel, payload);
    this.waiters = this.waiters.filter((w) => {
      if (w.channel !== channel || !w.pred(payload)) return true;
      w.resolve(payload);
      return false;
    });
  }
  setWindowOpenHandler(handler: (details: { url: string }) => unknown): void {
    this.windowOpenHandler = handler;
  }
  /** The window closed: `destroyed` fires once, and the contents takes nothing more. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('destroyed');
  }

  /** Test side: the first payload sent on `channel` that `pred` accepts, now or later. */
  sentOn<T>(channel: string, pred: (payload: T) => boolean = () => true): Promise<T> {
    const seen = this.sent.find((s) => s.channel === channel && pred(s.payload as T));
    if (seen) return Promise.resolve(seen.payload as T);
    return new Promise((resolve) => this.waiters.push({ channel, pred: pred as (p: unknown) => boolean, resolve: resolve as (p: unknown) => void }));
  }
}

/** `BrowserWindow`: the options it was made with, its webContents, whether it was shown and focused. */
export class BrowserWindow extends EventEmitter {
  readonly webContents = new StandInWebContents();
  loadedUrl: string | undefined;
  shown = false;
  focused = false;
  minimized = false;
  constructor(readonly options: Record<string, unknown>) {
    super();
    current.windows.push(this);
    // As in Electron: every webContents that comes to exist is announced on `app`.
    current.app.emit('web-contents-created', new StandInEvent(), this.webContents);
  }
  /**
   * As Electron loads a page: the navigation starts (`did-start-navigation`, before the preload is
   * read), then the document commits (`did-navigate`, 200). A loadURL that fired neither had a
   * bridge attached before it judge a page no load had renewed.
   */
  async loadURL(url: string): Promise<void> {
    this.loadedUrl = url;
    this.webContents.startNavigation(url);
    this.webContents.navigate(url);
    current.loaded(this);
  }
  isDestroyed(): boolean {
    return this.webContents.isDestroyed();
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  restore(): void {
    this.minimized = false;
  }
  show(): void {
    this.shown = true;
  }
  focus(): void {
    this.focused = true;
  }
}

export class StandInApp extends EventEmitter {
  readonly isPackaged = false;
  lockRequests = 0;
  whenReadyCalls = 0;
  quits = 0;
  exitCode: number | undefined;
  private isReadyNow = false;
  private markReady: () => void = () => {};
  private readonly readyPromise = new Promise<void>((resolve) => (this.markReady = resolve));
  private markGone: () => void = () => {};
  /** Settles when a quit went through (its `before-quit` not cancelled) or `exit` was called. */
  readonly gone = new Promise<void>((resolve) => (this.markGone = resolve));

  constructor(
    private readonly lock: boolean,
    private readonly paths: Record<string, string>,
  ) {
    super();
  }
  requestSingleInstanceLock(): boolean {
    this.lockRequests++;
    return this.lock;
  }
  whenReady(): Promise<void> {
    this.whenReadyCalls++;
    return this.readyPromise;
  }
  isReady(): boolean {
    return this.isReadyNow;
  }
  getPath(name: string): string {
    const path = this.paths[name];
    if (path === undefined) throw new Error(`stand-in app.getPath: no path ${name}`);
    return path;
  }
  quit(): void {
    this.quits++;
    const event = new StandInEvent();
    this.emit('before-quit', event);
    if (!event.defaultPrevented) this.markGone();
  }
  exit(code = 0): void {
    this.exitCode = code;
    this.markGone();
  }

  /** Test side: Electron is ready. */
  ready(): void {
    this.isReadyNow = true;
    this.markReady();
    this.emit('ready');
  }
}

export class StandInIpcMain extends StandInIpcHandlers {
  /**
   * Test side: what `ipcRenderer.invoke(channel, payload)` from `senderFrame` of `sender` gets: as
   * in Electron, the sender's own `webContents.ipc` handler if it has one, else `ipcMain`'s.
   */
  async invoke(channel: string, sender: StandInWebContents, senderFrame: StandInFrame | null, payload?: unknown): Promise<unknown> {
    const handler = (sender.ipc.handlers.get(channel) ?? this.handlers.get(channel)) as ((event: unknown, payload: unknown) => unknown) | undefined;
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    return handler({ sender, senderFrame }, payload);
  }
}

/** `Menu`: `buildFromTemplate` keeps the template; `setApplicationMenu` records the menu set. */
export class StandInMenu {
  constructor(readonly template: readonly object[]) {}
  static buildFromTemplate(template: readonly object[]): StandInMenu {
    return new StandInMenu(template);
  }
  static setApplicationMenu(menu: StandInMenu | null): void {
    current.applicationMenu = menu;
  }
}
export { StandInMenu as Menu };

/** `dialog`: each `showMessageBox` kept (its window and options), answered as if its first button were pressed. */
export class StandInDialog {
  readonly messageBoxes: { window: unknown; options: Record<string, unknown> }[] = [];
  showMessageBox(window: unknown, options: Record<string, unknown>): Promise<{ response: number; checkboxChecked: boolean }> {
    this.messageBoxes.push({ window, options });
    return Promise.resolve({ response: 0, checkboxChecked: false });
  }
}

export class StandInSession extends EventEmitter {
  permissionRequestHandler: ((...args: never[]) => void) | undefined;
  permissionCheckHandler: ((...args: never[]) => boolean) | undefined;
  readonly protocol = {
    handlers: new Map<string, (request: Request) => Promise<Response> | Response>(),
    handle(scheme: string, handler: (request: Request) => Promise<Response> | Response): void {
      if (this.handlers.has(scheme)) throw new Error(`scheme ${scheme} is already handled`);
      this.handlers.set(scheme, handler);
    },
  };
  setPermissionRequestHandler(handler: (...args: never[]) => void): void {
    this.permissionRequestHandler = handler;
  }
  setPermissionCheckHandler(handler: (...args: never[]) => boolean): void {
    this.permissionCheckHandler = handler;
  }
}

export interface PrivilegedScheme {
  scheme: string;
  privileges: Record<string, boolean>;
}

export class StandInProtocol {
  /** Each call, and whether `app` was ready then (Electron allows it only before). */
  readonly privileged: { schemes: PrivilegedScheme[]; beforeReady: boolean }[] = [];
  registerSchemesAsPrivileged(schemes: PrivilegedScheme[]): void {
    this.privileged.push({ schemes, beforeReady: !current.app.isReady() });
  }
}

/** One stand-in Electron: what a test drives and reads. */
export interface StandIn {
  app: StandInApp;
  ipcMain: StandInIpcMain;
  dialog: StandInDialog;
  protocol: StandInProtocol;
  session: { defaultSession: StandInSession };
  windows: BrowserWindow[];
  /** The menu `Menu.setApplicationMenu` set (undefined: never called, Electron's default menu). */
  applicationMenu: StandInMenu | null | undefined;
  /** Settles with the first window whose page was loaded. */
  windowLoaded: Promise<BrowserWindow>;
  loaded(window: BrowserWindow): void;
}

function fresh(options: { lock?: boolean; paths?: Record<string, string> } = {}): StandIn {
  let loaded: (window: BrowserWindow) => void = () => {};
  const windowLoaded = new Promise<BrowserWindow>((resolve) => (loaded = resolve));
  return {
    app: new StandInApp(options.lock ?? true, options.paths ?? {}),
    ipcMain: new StandInIpcMain(),
    dialog: new StandInDialog(),
    protocol: new StandInProtocol(),
    session: { defaultSession: new StandInSession() },
    windows: [],
    applicationMenu: undefined,
    windowLoaded,
    loaded: (window) => loaded(window),
  };
}

let current: StandIn = fresh();
export let app: StandInApp = current.app;
export let ipcMain: StandInIpcMain = current.ipcMain;
export let dialog: StandInDialog = current.dialog;
export let protocol: StandInProtocol = current.protocol;
export let session: { defaultSession: StandInSession } = current.session;

/** A fresh stand-in, in place of the previous one, for the next main.ts to run on. */
export function resetElectron(options: { lock?: boolean; paths?: Record<string, string> } = {}): StandIn {
  current = fresh(options);
  ({ app, ipcMain, dialog, protocol, session } = current);
  return current;
}

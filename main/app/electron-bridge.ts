// The desktop bridge: the Electron-free BridgeHost bound to one window's webContents. It needs no
// `electron` import at run time: the IPC handlers go on `webContents.ipc` (the IpcMain that hears
// only that webContents, Electron ≥ 17), so `chatty-protocol-gateway/electron` imports on plain
// Node and a test drives it with a stand-in webContents.
import type { ProtocolGateway } from '../gateway/index.js';
import { BridgeHost, type GrantDesk } from './bridge/bridge-host.js';
import { APP_ORIGIN } from './app-pages.js';
import { checkCustomPageUrl } from './custom-origin.js';
import { bridgeWorkspace } from './pages-guard.js';

/** What Electron tells an `ipc.handle` listener about the call (its `IpcMainInvokeEvent`). */
export interface BridgeInvokeEvent {
  sender: unknown;
  /** The sending frame (null once it is gone). */
  senderFrame: { url: string } | null;
}

/** The members of Electron's `WebContents` the bridge uses; Electron's own satisfies it. */
export interface BridgedWebContents {
  readonly ipc: {
    handle(channel: string, listener: (event: BridgeInvokeEvent, payload: unknown) => Promise<unknown>): void;
    removeHandler(channel: string): void;
  };
  readonly mainFrame: unknown;
  isDestroyed(): boolean;
  send(channel: string, payload: unknown): void;
  on(event: 'did-navigate' | 'render-process-gone', listener: () => void): unknown;
  off(event: 'did-navigate' | 'render-process-gone' | 'destroyed', listener: () => void): unknown;
  once(event: 'destroyed', listener: () => void): unknown;
}

export interface DesktopBridgeOptions {
  /**
   * The page the bridge answers: the exact URL of the window's top frame (default
   * `app://chatty/index.html`, the page `handleAppProtocol` serves from an app's `pages` folder).
   * On a custom scheme with a lower-case ASCII host, like `origin`: a web or built-in scheme
   * (a dev server's http://localhost too) throws.
   */
  pageUrl?: string;
  /** Where refusals and other notes go (default: nowhere). */
  log?: (line: string) => void;
  /** The plugins' grant desk (`registry.grants`, `startAppGateway`'s `grants`): its capability requests are put to the page too. */
  grants?: GrantDesk | undefined;
}

/** The default page: `index.html` of the app's own pages, on the app's origin. */
export const DEFAULT_PAGE_URL = `${APP_ORIGIN}/index.html`;

/** The webContents a bridge is attached to now: a second one would take the root over half-way. */
const attached = new WeakSet<BridgedWebContents>();

/**
 * Each gateway's bridges whose window is open, oldest first. The last is the root's human; when
 * its window closes or it is detached, the one before it takes the root back (else a second
 * window closing left approvals denied at once while the first window's page was still there).
 */
const humans = new WeakMap<ProtocolGateway, BridgeHost[]>();

/**
 * Each grant desk's bridges whose window is open, oldest first, whatever their gateways (one
 * registry's desk may serve a gateway per window). The last holds the desk; when its window closes
 * or it is detached, it drops the desk and the one before it takes it back; with none left the
 * desk keeps the requests for the next bridge given it.
 */
const deskHolders = new WeakMap<GrantDesk, BridgeHost[]>();

/** `host` joins the bridges holding `key` (`humans` or `deskHolders`), as the newest: the holder. */
function joinHolders<K extends object>(holders: WeakMap<K, BridgeHost[]>, key: K, host: BridgeHost): void {
  holders.set(key, [...(holders.get(key) ?? []), host]);
}

/** `host`'s window is gone: it leaves `key`'s bridges, and if it was the holder, `retake` makes the one before it the holder again. */
function leaveHolders<K extends object>(holders: WeakMap<K, BridgeHost[]>, key: K, host: BridgeHost, retake: (previous: BridgeHost) => void): void {
  const hosts = holders.get(key) ?? [];
  const at = hosts.indexOf(host);
  if (at === -1) return;
  hosts.splice(at, 1);
  const previous = hosts.at(-1);
  if (at === hosts.length && previous) retake(previous);
}

/**
 * Makes the window's page the human of `gateway`'s in-process root: each `window.chatty` call
 * (the preload's IPC channels) is answered only for the window's top frame at `pageUrl`, with its
 * payload validated; approvals and questions wait for the page, and are sent to it; a reload or
 * navigation of the top frame, or a crash, denies the approvals waiting and withdraws the
 * questions (nobody is looking at them any more); the window closing detaches the bridge. The
 * gateway must be started, the webContents without a bridge, and the gateway's workspace apart
 * from every `pages` folder served (else it throws: pages-guard.ts). Returns the function that
 * detaches it (every handler removed, what waits denied, and from then on approvals denied and
 * questions refused at once).
 */
export function attachDesktopBridge(gateway: ProtocolGateway, contents: BridgedWebContents, options: DesktopBridgeOptions = {}): () => void {
  const started = gateway.listening;
  if (!started) throw new Error('attachDesktopBridge: the gateway is not started (await gateway.start() first)');
  if (attached.has(contents)) throw new Error('attachDesktopBridge: this webContents has a bridge already (call its detach function first)');
  // Its 'destroyed' never comes again: the bridge would be the root's human for good, every
  // approval waiting in a window nobody can see.
  if (contents.isDestroyed()) throw new Error('attachDesktopBridge: the webContents is destroyed (its window closed before the bridge was attached)');
  const pageUrl = options.pageUrl ?? DEFAULT_PAGE_URL;
  checkCustomPageUrl(pageUrl); // never a web page's (or a built-in scheme's) top frame
  // Before anything is attached: the served pages must not be where this gateway's agents write.
  const forgetWorkspace = bridgeWorkspace(gateway);
  const host = new BridgeHost(gateway, started, (url) => url === pageUrl, { ...(options.log ? { log: options.log } : {}), grants: options.grants });
  attached.add(contents);
  const desk = options.grants;
  joinHolders(humans, gateway, host);
  if (desk) joinHolders(deskHolders, desk, host);
  // The window closed or the bridge detached (either first, the other then does nothing more).
  const leave = (): void => {
    leaveHolders(humans, gateway, host, (previous) => previous.takeRoot());
    host.dropDesk();
    if (desk) leaveHolders(deskHolders, desk, host, (previous) => previous.takeDesk());
    forgetWorkspace();
  };
  const unbind = bindBridge(host, contents, leave);
  let detached = false;
  return () => {
    if (detached) return;
    detached = true;
    host.close(); // first: the page, still there, is told what it no longer waits for
    unbind();
    leave();
    attached.delete(contents);
  };
}

/** Binds a BridgeHost to the window's webContents (`closed` when it is destroyed); returns the unbind function. */
function bindBridge(host: BridgeHost, contents: BridgedWebContents, closed: () => void): () => void {
  for (const channel of host.invokeChannels) {
    contents.ipc.handle(channel, (event, payload) => {
      const frame = event.senderFrame;
      // Only this window's top frame: a sub-frame (even at the page's URL) is refused.
      const sender = { url: frame?.url ?? '', isMainFrame: event.sender === contents && frame !== null && frame === contents.mainFrame };
      return host.handle(channel, sender, payload);
    });
  }
  host.attachWindow((channel, payload) => {
    if (!contents.isDestroyed()) contents.send(channel, payload);
  });
  // `did-navigate`: the top frame committed a new document (a reload). Not `did-start-navigation`,
  // which Electron fires before `will-navigate` can cancel the navigation: a refused navigation
  // must not deny what waits while the page stays. In-page navigations are `did-navigate-in-page`.
  const onNavigation = (): void => host.windowReset('the window was reloaded');
  const onCrash = (): void => host.windowReset('the window crashed');
  // The window is gone for good: the host stops answering and hearing the gateway (its edge rows,
  // decisions, plugin changes), as a detach does; else each window closed left a live host behind.
  const onDestroyed = (): void => {
    host.close('the window was closed');
    closed();
  };
  contents.on('did-navigate', onNavigation);
  contents.on('render-process-gone', onCrash);
  contents.once('destroyed', onDestroyed);
  return () => {
    if (!contents.isDestroyed()) {
      contents.off('did-navigate', onNavigation);
      contents.off('render-process-gone', onCrash);
      contents.off('destroyed', onDestroyed);
      for (const channel of host.invokeChannels) contents.ipc.removeHandler(channel);
    }
    host.detachWindow('the app is closing');
  };
}

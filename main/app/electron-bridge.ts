// The desktop bridge: the Electron-free BridgeHost bound to one window's webContents. It needs no
// `electron` import at run time: the IPC handlers go on `webContents.ipc` (the IpcMain that hears
// only that webContents, Electron ≥ 17), so `chatty-protocol-gateway/electron` imports on plain
// Node and a test drives it with a stand-in webContents.
import type { ProtocolGateway } from '../gateway/index.js';
import { BridgeHost, type GrantDesk, type WindowSend } from './bridge/bridge-host.js';
import { EVENT_CHANNELS, type Refused } from './bridge/contract.js';
import { APP_ORIGIN } from './app-pages.js';
import { checkCustomPageUrl } from './custom-origin.js';
import { checkPreloadCopies, lastPreloadChange, onPreloadChange, preloadTamperings, renewPreloadCopies } from './preload-copy.js';
import { agentWorkspacesOf, holdAgentWorkspaces } from './agent-workspaces.js';
import { holdTrustFiles, refuseTrustFilesInWorkspaces } from './trust-files-guard.js';

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
  /** The top frame (Electron's `WebFrameMain`): its URL is what the bridge judges the page by. */
  readonly mainFrame: { readonly url: string };
  isDestroyed(): boolean;
  /** Whether the page's renderer process is gone (a bridge attached then asks nobody there until it loads). */
  isCrashed(): boolean;
  send(channel: string, payload: unknown): void;
  /** The top frame committed a document: its URL and HTTP status (Electron's arguments). */
  on(event: 'did-navigate', listener: (event: unknown, url: string, httpResponseCode: number) => void): unknown;
  /** A same-document navigation (a hash router, `history.pushState`), of the top frame when `isMainFrame`. */
  on(event: 'did-navigate-in-page', listener: (event: unknown, url: string, isMainFrame: boolean) => void): unknown;
  /** A load failed; with `isMainFrame` and any error but ERR_ABORTED the top frame is an error page. */
  on(event: 'did-fail-load', listener: (event: unknown, errorCode: number, errorDescription: string, validatedURL: string, isMainFrame: boolean) => void): unknown;
  /** A navigation ended without a document of its own (ERR_ABORTED: cancelled; Electron's did-fail-load omits those). */
  on(event: 'did-fail-provisional-load', listener: (event: unknown, errorCode: number, errorDescription: string, validatedURL: string, isMainFrame: boolean) => void): unknown;
  on(event: 'render-process-gone', listener: () => void): unknown;
  /** A navigation starts (Electron's details, then its positional `url, isSameDocument, isMainFrame`); the preload runs after it for a new document. */
  on(event: 'did-start-navigation', listener: (details: unknown, url: string, isSameDocument: boolean, isMainFrame: boolean) => void): unknown;
  off(event: 'did-start-navigation', listener: (details: unknown, url: string, isSameDocument: boolean, isMainFrame: boolean) => void): unknown;
  off(event: 'did-navigate', listener: (event: unknown, url: string, httpResponseCode: number) => void): unknown;
  off(event: 'did-navigate-in-page', listener: (event: unknown, url: string, isMainFrame: boolean) => void): unknown;
  off(event: 'did-fail-load' | 'did-fail-provisional-load', listener: (event: unknown, errorCode: number, errorDescription: string, validatedURL: string, isMainFrame: boolean) => void): unknown;
  off(event: 'render-process-gone' | 'destroyed', listener: () => void): unknown;
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
  /**
   * The app's own files the agents must never write, besides the gateway's approvals file (always
   * checked): the plugins' grants file, a `plugins.lock`. The gateway's workspace may not hold
   * any of them (it throws): one approved write there would grant a plugin or add an
   * "always allow" rule.
   */
  trustFiles?: readonly string[] | undefined;
  /**
   * The folders this gateway's agents write in besides its `broker.root.workspaceRoot` (a
   * `LocalRunner` given its own workspace factory, `bundledAgents` given another folder's
   * `detectWorkspace`): each kept apart from the pages, the preload copies, this package and the
   * trust files as the root workspace is. Required when the gateway has no root workspace (`[]`
   * when its agents write no files): without it the attach throws, as it could check nothing.
   * They are the gateway's once a bridge is attached with them: its later bridges check them too,
   * named again or not, and they stay kept apart while any of its bridges is attached.
   */
  agentWorkspaces?: readonly string[] | undefined;
  /**
   * Called in the main process when the window's page is refused for its preload (a copy changed
   * by someone else, or one that could not be checked), with the reason the page is sent
   * (`chatty:refused`), once a document, wherever its top frame is (the page is told only at
   * `pageUrl`). The page's own notice can be hidden by the very script that changed the preload;
   * show this where no page script reaches (Electron's `dialog.showMessageBox`). A listener that
   * throws is logged; the page is refused all the same.
   */
  onRefused?: ((reason: string) => void) | undefined;
}

/** What a refused page's calls and the log say the person or developer can do (the app's menu has no Reload). */
const RELOAD_TO_ASK_AGAIN = 'Reload the window (the app\'s webContents.reload(), or close the window and open it again, or restart the app): the load writes a checked copy, and the page is answered again';
/** What the log says the developer should look for when a copy was changed. */
const FIND_WHO_CHANGED = "Look for who could write it: an agent's approved ln, chmod or write in the app's userData, or another program of this user's";

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
 * navigation of the top frame denies the approvals waiting and withdraws the questions (nobody is
 * looking at them any more). A crash does too, and until the page is loaded again the window is
 * nobody to ask: the bridge attached before it (its window open) is the human, else approvals are
 * denied at once. The window closing ends the bridge. The gateway must be started, the
 * webContents open and without a bridge, and the gateway's workspace apart from every `pages`
 * folder served and free of the app's trust files (else it throws: pages-guard.ts,
 * trust-files-guard.ts). Returns the function that detaches it (every handler removed, what waits
 * denied, and from then on approvals denied and questions refused at once).
 */
export function attachDesktopBridge(gateway: ProtocolGateway, contents: BridgedWebContents, options: DesktopBridgeOptions = {}): () => void {
  const started = gateway.listening;
  if (!started) throw new Error('attachDesktopBridge: the gateway is not started (await gateway.start() first)');
  // First: a window closed with its bridge never detached is still in `attached`, and what is
  // wrong with it is that it is closed. Its 'destroyed' never comes again: the bridge would be
  // the root's human for good, every approval waiting in a window nobody can see.
  if (contents.isDestroyed()) throw new Error('attachDesktopBridge: the webContents is destroyed (its window closed before the bridge was attached)');
  if (attached.has(contents)) throw new Error('attachDesktopBridge: this webContents has a bridge already (call its detach function first)');
  const pageUrl = options.pageUrl ?? DEFAULT_PAGE_URL;
  checkCustomPageUrl(pageUrl); // never a web page's (or a built-in scheme's) top frame
  // Before anything is attached: no file the agents may write is one the app trusts.
  const workspaces = agentWorkspacesOf(gateway, options.agentWorkspaces);
  refuseTrustFilesInWorkspaces(gateway, workspaces, options.trustFiles ?? []);
  // Nor a page served, nor a preload copy: held apart, and the named ones the gateway's, while any of its bridges is attached.
  const forgetWorkspace = holdAgentWorkspaces(gateway, workspaces, options.agentWorkspaces);
  // And the trust files held too: a gateway bridged later may not write them either.
  const forgetTrustFiles = holdTrustFiles(gateway, options.trustFiles ?? []);
  const forget = (): void => {
    forgetWorkspace();
    forgetTrustFiles();
  };
  const host = new BridgeHost(gateway, started, (url) => url === pageUrl, { ...(options.log ? { log: options.log } : {}), grants: options.grants });
  attached.add(contents);
  const desk = options.grants;
  const humanity: WindowHumanity = {
    join: () => {
      joinHolders(humans, gateway, host);
      if (desk) joinHolders(deskHolders, desk, host);
    },
    leave: () => {
      leaveHolders(humans, gateway, host, (previous) => previous.takeRoot());
      host.dropDesk();
      if (desk) leaveHolders(deskHolders, desk, host, (previous) => previous.takeDesk());
    },
  };
  humanity.join(); // the host took the root and the desk as it was made
  const unbind = bindBridge(host, contents, pageUrl, humanity, forget, options.log ?? (() => {}), options.onRefused);
  let detached = false;
  return () => {
    if (detached) return;
    detached = true;
    host.close(); // first: the page, still there, is told what it no longer waits for
    unbind();
    humanity.leave();
    forget();
    attached.delete(contents);
  };
}

/** How a window's bridge stops and starts being a human of its gateway (and its desk's holder). */
interface WindowHumanity {
  /** Its page is there to ask: it is the newest holder (the host takes the root and desk itself). */
  join(): void;
  /** Its page is gone (crashed, left or closed): the bridge before it, if any, holds them again. */
  leave(): void;
}

/**
 * Binds a BridgeHost to the window's webContents; returns the function that only takes the
 * listeners and handlers off again. Who ends what: the window closing ends the host
 * (`host.close()`), then `humanity.leave()` and `forget()`; a crash, or the top frame anywhere but
 * at `pageUrl` with a document that is no error (another URL, a fragment, a 404, a failed load),
 * takes the window away (`host.pageGone()`, `humanity.leave()`) until the top frame is the page
 * again (`host.attachWindow()`, `humanity.join()`, the host taking the root and desk again).
 */
function bindBridge(
  host: BridgeHost,
  contents: BridgedWebContents,
  pageUrl: string,
  humanity: WindowHumanity,
  forget: () => void,
  log: (line: string) => void,
  onRefused: ((reason: string) => void) | undefined,
): () => void {
  // Why the preload of the top frame's document is not the checked copy (its renewal failed, or a
  // copy was changed since), if it is not. It stands until another document commits.
  let preloadUnchecked: string | undefined;
  // The copies' changes seen (preloadTamperings) when this document's preload was renewed. At the
  // attach, 0: the page may have loaded before it, from a copy changed and renewed since.
  let tamperingsAtRenewal = 0;
  // The renewals since the last commit are for the document that commits next, not for this one:
  // a navigation started and never committed (one will-navigate refuses, which the page itself can
  // start: Electron announces it first) leaves this document and what its preload ran. So each
  // renewal is kept here, the earliest mark and any failure (the document that commits may be
  // that of any navigation started since), and given to the document at its commit.
  let nextDocument: { tamperingsAtRenewal: number; unchecked: string | undefined } | undefined;
  // The top frame's navigations started and not finished: new documents, and same-document ones
  // (Electron's did-fail-provisional-load does not say which kind was cancelled).
  const unfinished = { newDocument: 0, sameDocument: 0 };
  // Whether this document was told it is refused (chatty:refused): once a document.
  let toldRefused = false;
  // Whether the app was told (onRefused) that this document is refused: once a document, wherever
  // its top frame went in it. And whether there is a document to refuse: one committed since the
  // attach, or the one there at the attach (a window not loaded yet has none).
  let appTold = false;
  let documentThere = contents.mainFrame.url !== '' && contents.mainFrame.url !== 'about:blank';
  const documentCommitted = (): void => {
    toldRefused = false;
    appTold = false;
    documentThere = true;
    unfinished.newDocument = 0;
    unfinished.sameDocument = 0;
    if (nextDocument === undefined) return; // no renewal seen since: its preload is the one read before
    ({ tamperingsAtRenewal, unchecked: preloadUnchecked } = nextDocument);
    nextDocument = undefined;
  };
  // A navigation of the top frame was cancelled (ERR_ABORTED: refused by will-navigate, superseded).
  // When none is left that could commit, the next one starts afresh, its own renewal judged alone
  // (a renewal that failed for a link the page refused is no reason to refuse a later load that
  // renewed the copies: the refusal's "put right what that names, then reload" would be false once);
  // a cancelled one is taken to be a same-document one first (it commits no document), so the count
  // of new documents only ever counts too many, and nothing pending is forgotten too early.
  const navigationCancelled = (): void => {
    if (unfinished.sameDocument > 0) return void (unfinished.sameDocument -= 1);
    if (unfinished.newDocument === 0) return;
    unfinished.newDocument -= 1;
    if (unfinished.newDocument === 0) nextDocument = undefined;
  };
  // Electron reads the preload some time after its renewal (the load, the renderer's start): a
  // link made and written in between would be what runs. So the copies are checked again when the
  // document is there (did-navigate) and at each of its calls: any copy changed since this
  // document's renewal (now or seen before) may be what it ran, and its calls are refused, the
  // window nobody to ask, until a load renews the copies.
  const judgePreload = (): void => {
    for (const { copy, change } of checkPreloadCopies()) log(`bridge: the preload copy ${copy} was changed by someone else: ${change}; the windows loaded from it are nobody to ask until they load again. ${FIND_WHO_CHANGED}`);
    refuseIfChanged();
  };
  // Whichever check counts a change (another window's call or load, a second preloadCopy), this
  // page is judged at once: from then on it is asked nothing, and what waited in it is withdrawn
  // (the page told of each, with why), not at its own next call.
  const refuseIfChanged = (): void => {
    if (preloadUnchecked === undefined && preloadTamperings() > tamperingsAtRenewal) {
      const last = lastPreloadChange();
      preloadUnchecked = `the window's preload copy${last ? ` ${last.copy}` : ''} was changed by someone else after this page's copy was renewed${last ? ` (${last.change})` : ''}: the page may run their script, so it is answered no more. ${RELOAD_TO_ASK_AGAIN}`;
      refusePage(preloadUnchecked);
    }
  };
  // The page is refused for its preload: what waited in it withdrawn (noPageToAsk), then the page
  // itself told why, once a document, even with nothing waiting (before, such a page learnt it only
  // at its next call, and the person saw nothing). Sound to send: the agent's script, if it runs
  // there, knows already; it may hide the notice, so the log line and the app's onRefused (shown
  // natively, where no page script reaches) are the words to rely on.
  const refusePage = (reason: string): void => {
    noPageToAsk(reason);
    if (!toldRefused && contents.mainFrame.url === pageUrl) {
      toldRefused = true;
      send(EVENT_CHANNELS.refused, { reason } satisfies Refused);
    }
    // And the app, in the main process, wherever the top frame is: the script that may run there
    // can leave pageUrl for a route of its own document (pushState, a hash) before the change is
    // found, and was then never shown the dialog (the page's notice waits for it to come back).
    if (appTold || !documentThere) return;
    appTold = true;
    try {
      onRefused?.(reason);
    } catch (err) {
      log(`bridge: onRefused failed: ${(err as Error)?.message ?? String(err)}`);
    }
  };
  const stopHearingChanges = onPreloadChange(refuseIfChanged);
  for (const channel of host.invokeChannels) {
    contents.ipc.handle(channel, (event, payload) => {
      const frame = event.senderFrame;
      const topFrame = event.sender === contents && frame !== null && frame === contents.mainFrame;
      if (topFrame) judgePreload();
      // Only this window's top frame: a sub-frame (even at the page's URL) is refused, and so is a
      // page whose preload is not the checked copy (it may run what an agent wrote).
      const sender = { url: frame?.url ?? '', isMainFrame: topFrame && preloadUnchecked === undefined, ...(topFrame && preloadUnchecked !== undefined ? { refusal: preloadUnchecked } : {}) };
      return host.handle(channel, sender, payload);
    });
  }
  const send: WindowSend = (channel, payload) => {
    if (!contents.isDestroyed()) contents.send(channel, payload);
  };
  // Whether there is a page to ask is whether the host has a window: it is attached below when the
  // top frame is the page, else at the load that brings it there, and only a crash or leaving the
  // page takes it away while these listeners are on (a close ends the host, and its events).
  const noPageToAsk = (reason: string): void => {
    if (!host.hasWindow) return;
    // The desk's requests first, while the page can still be told they are withdrawn (before, the
    // host forgot the window and then gave up the desk: a page that left for another route of its
    // document and came back kept the stale popover, its answer refused, beside the same request
    // handed to it again under a new id).
    host.dropDesk(reason);
    // What waits is denied (shown to a page that is gone); what is asked from now on goes to
    // the bridge before this one, or is denied at once: never sent to a page that cannot answer.
    host.pageGone(reason);
    humanity.leave();
  };
  const onCrash = (): void => noPageToAsk('the window crashed');
  // Whether the top frame is the page that can answer is judged in one place, by the frame: at
  // exactly `pageUrl` (a fragment too is another URL: the page's own calls from there are refused)
  // and its document not an error (a 404, a failed load). Any other top frame is no page to ask,
  // as a crashed one, until it is the page again. `newDocument`: a document was committed (a
  // reload: what the page showed is gone); a same-document navigation loses nothing.
  const judgeTopFrame = (newDocument: boolean, failure?: string): void => {
    const url = contents.mainFrame.url;
    if (newDocument) documentCommitted();
    if (failure !== undefined) return noPageToAsk(failure);
    if (newDocument) judgePreload();
    if (preloadUnchecked !== undefined) return refusePage(preloadUnchecked);
    if (url !== pageUrl) return noPageToAsk(`the window left its page for ${url}`);
    if (newDocument) host.windowReset('the window was reloaded');
    if (host.hasWindow) return;
    // The page is back (after a crash, or from another page): it is the human again, the newest.
    host.attachWindow(send);
    humanity.join();
    host.takeRoot();
    host.takeDesk();
  };
  // A new document of the top frame starts: Electron reads `webPreferences.preload` for it next,
  // from the disk. The copies preloadCopy made are renewed now (a changed one written again as a
  // new file), so a hard link made to one during this launch, and written, is not what runs. Not
  // for a sub-frame (no preload runs there) or a same-document navigation (none runs again).
  const onNavigationStart = (details: unknown, _url: string, isSameDocument: boolean, isMainFrame: boolean): void => {
    const fields = (typeof details === 'object' && details !== null ? details : {}) as { isMainFrame?: unknown; isSameDocument?: unknown };
    if (!(typeof fields.isMainFrame === 'boolean' ? fields.isMainFrame : isMainFrame)) return;
    if (typeof fields.isSameDocument === 'boolean' ? fields.isSameDocument : isSameDocument) return void (unfinished.sameDocument += 1);
    unfinished.newDocument += 1;
    let unchecked: string | undefined;
    try {
      for (const { copy, change } of renewPreloadCopies()) log(`bridge: the preload copy ${copy} was changed by someone else (${change}): renewed as a new file before the load`);
    } catch (err) {
      unchecked = `the window's preload could not be checked (${(err as Error).message}), so the page is not answered: put right what that names, then ${RELOAD_TO_ASK_AGAIN.replace(/^R/, 'r')}`;
      log(`bridge: cannot renew the preload copy before the load: ${(err as Error).message}; the page is nobody to ask until a load renews it`);
    }
    // The mark is taken after the renewal: a change it found (and counted) was written over before
    // this load reads the preload, so it is no reason to refuse the document the load commits (else
    // the person's reload, as the refusal says, was refused too); a change found later still counts.
    // The earliest mark since the last commit is kept (the document that commits may be an earlier one's).
    nextDocument ??= { tamperingsAtRenewal: preloadTamperings(), unchecked: undefined };
    nextDocument.unchecked ??= unchecked;
    // This document is judged as before: a change counted by the renewal is one it may have run.
    if (host.hasWindow) judgePreload();
  };
  // `did-navigate`: the top frame committed a new document. Not `did-start-navigation`, which
  // Electron fires before `will-navigate` can cancel the navigation: a refused navigation must not
  // deny what waits while the page stays.
  const onNavigation = (_event: unknown, url: string, httpResponseCode: number): void =>
    judgeTopFrame(true, httpResponseCode >= 400 ? `the window's page ${url} answered ${httpResponseCode}` : undefined);
  const onInPageNavigation = (_event: unknown, _url: string, isMainFrame: boolean): void => {
    if (!isMainFrame) return;
    unfinished.sameDocument = Math.max(0, unfinished.sameDocument - 1);
    judgeTopFrame(false);
  };
  // ERR_ABORTED (-3): the load was cancelled (a refused navigation, one superseded); the document
  // before it stays. Any other failure of the top frame commits an error page.
  const ERR_ABORTED = -3;
  // Electron tells of a cancelled navigation here only (never in did-fail-load).
  const onProvisionalFailure = (_event: unknown, errorCode: number, _errorDescription: string, _validatedURL: string, isMainFrame: boolean): void => {
    if (isMainFrame && errorCode === ERR_ABORTED) navigationCancelled();
  };
  const onFailedLoad = (_event: unknown, errorCode: number, errorDescription: string, validatedURL: string, isMainFrame: boolean): void => {
    if (isMainFrame && errorCode !== ERR_ABORTED) judgeTopFrame(true, `the window's load of ${validatedURL} failed (${errorDescription})`);
  };
  // The window is gone for good: the host stops answering and hearing the gateway (its edge rows,
  // decisions, plugin changes), as a detach does; else each window closed left a live host behind.
  const onDestroyed = (): void => {
    stopHearingChanges();
    host.close('the window was closed');
    humanity.leave();
    forget();
  };
  // The window is judged before anything is sent to it, as judgeTopFrame judges a load: it is the
  // page to ask only when its renderer is alive, its top frame at exactly `pageUrl` and its preload
  // unchanged since launch (the page may have loaded before the attach, from a copy changed since).
  // Else it is nobody to ask until its load says otherwise: what the root asks goes to the bridge
  // before it, or is denied at once, and no capability request is sent to it (before, the attach
  // sent the desk's requests first and judged after, and a window not at its page, a hash route or
  // another page, was made the human: approvals waited there, its answers refused).
  if (!contents.isCrashed()) judgePreload(); // a page refused is told so (refusePage)
  if (!contents.isCrashed() && preloadUnchecked === undefined && contents.mainFrame.url === pageUrl) host.attachWindow(send);
  else humanity.leave();
  contents.on('did-start-navigation', onNavigationStart);
  contents.on('did-navigate', onNavigation);
  contents.on('did-navigate-in-page', onInPageNavigation);
  contents.on('did-fail-load', onFailedLoad);
  contents.on('did-fail-provisional-load', onProvisionalFailure);
  contents.on('render-process-gone', onCrash);
  contents.once('destroyed', onDestroyed);
  return () => {
    stopHearingChanges();
    if (contents.isDestroyed()) return;
    contents.off('did-start-navigation', onNavigationStart);
    contents.off('did-navigate', onNavigation);
    contents.off('did-navigate-in-page', onInPageNavigation);
    contents.off('did-fail-load', onFailedLoad);
    contents.off('did-fail-provisional-load', onProvisionalFailure);
    contents.off('render-process-gone', onCrash);
    contents.off('destroyed', onDestroyed);
    for (const channel of host.invokeChannels) contents.ipc.removeHandler(channel);
  };
}

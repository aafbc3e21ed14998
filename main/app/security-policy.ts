// The renderer's denials, as plain functions over the few members of Electron's objects they use,
// so test/app/security-policy.test.ts runs them without the Electron binary. Everything is denied
// but one grant: the app's own page may write text to the clipboard. main.ts applies them to the
// default session and, through `app.on('web-contents-created')`, to every webContents that ever
// exists (the window's, and any other that would appear).
import { APP_HOST, APP_SCHEME } from './app-protocol.js';

/** Where a refusal is told: the main-process log. */
export type DenialLog = (line: string) => void;

/** An Electron event that can be cancelled. */
export interface Preventable {
  preventDefault(): void;
}

/** `setWindowOpenHandler`'s answer that opens nothing. */
export interface DenyWindowOpen {
  action: 'deny';
}

/** The members of `WebContents` the policy uses. Electron's `WebContents` satisfies it. */
export interface PolicedContents {
  on(event: 'will-navigate', listener: (event: Preventable, url: string) => void): unknown;
  on(event: 'will-redirect', listener: (event: Preventable, url: string) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: Preventable) => void): unknown;
  on(event: 'will-prevent-unload', listener: (event: Preventable) => void): unknown;
  setWindowOpenHandler(handler: (details: { url: string }) => DenyWindowOpen): void;
}

/** What Electron tells about the frame behind a permission request or check (its `details`). */
export interface PermissionAsker {
  /** The last URL the asking frame loaded (absent for a check made for no document). */
  requestingUrl?: string;
  isMainFrame: boolean;
  /** Set for a cross-origin sub-frame only. */
  embeddingOrigin?: string;
}

type PermissionRequestHandler = (contents: unknown, permission: string, callback: (granted: boolean) => void, details: PermissionAsker) => void;
type PermissionCheckHandler = (contents: unknown, permission: string, requestingOrigin: string, details: PermissionAsker) => boolean;

/** The members of `Session` the policy uses. Electron's `Session` satisfies it. */
export interface PolicedSession {
  setPermissionRequestHandler(handler: PermissionRequestHandler): void;
  setPermissionCheckHandler(handler: PermissionCheckHandler): void;
  on(event: 'will-download', listener: (event: Preventable, item: { getURL(): string }) => void): unknown;
}

/** The one permission the app's page is granted: writing plain text to the clipboard (its Copy buttons). */
export const APP_PAGE_PERMISSIONS: readonly string[] = ['clipboard-sanitized-write'];

/** True when `url` (a page's URL or an origin) is on the app's own origin, `app://chatty`. */
function onAppOrigin(url: string | undefined): boolean {
  if (url === undefined) return false;
  try {
    const parsed = new URL(url);
    return parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === '';
  } catch {
    return false;
  }
}

/**
 * Whether `permission` is granted to the frame that asks: only `clipboard-sanitized-write`, and
 * only to the top frame of a page on the app's origin (no sub-frame, no other origin). Everything
 * else (camera, notifications, reading the clipboard, …) is refused. `origin` is the check
 * handler's `requestingOrigin`; when given it must be the app's origin too.
 */
export function grantsPermission(permission: string, details: PermissionAsker | undefined, origin?: string): boolean {
  if (!APP_PAGE_PERMISSIONS.includes(permission)) return false;
  if (details?.isMainFrame !== true) return false;
  // Electron's check handler sets `embeddingOrigin` to the top frame's origin even for the top frame
  // itself (whatever its documentation says), so only an embedding origin that is not ours refuses.
  if (details.embeddingOrigin !== undefined && !onAppOrigin(details.embeddingOrigin)) return false;
  if (origin !== undefined && !onAppOrigin(origin)) return false;
  return onAppOrigin(details.requestingUrl ?? origin);
}

/** Every permission request is refused (and logged), but what `grantsPermission` grants. */
export function denyPermissionRequest(log: DenialLog): PermissionRequestHandler {
  return (_contents, permission, callback, details) => {
    if (grantsPermission(permission, details)) return callback(true);
    log(`refused the permission request: ${permission}`);
    callback(false);
  };
}

/** Every synchronous permission check answers "not granted", but for what `grantsPermission` grants. */
export function denyPermissionCheck(): PermissionCheckHandler {
  return (_contents, permission, requestingOrigin, details) => grantsPermission(permission, details, requestingOrigin);
}

/** `window.open`, `target=_blank` links and middle-clicks open nothing (no new window, no browser). */
export function denyWindowOpen(log: DenialLog): (details: { url: string }) => DenyWindowOpen {
  return ({ url }) => {
    log(`refused to open a window: ${url}`);
    return { action: 'deny' };
  };
}

/**
 * The page never leaves itself: every navigation (a link, `location = …`, a form, a drag and
 * drop) and every server redirect is cancelled. A reload is not a navigation and still works.
 */
export function denyNavigation(log: DenialLog, what = 'navigation'): (event: Preventable, url: string) => void {
  return (event, url) => {
    event.preventDefault();
    log(`refused ${what} to ${url}`);
  };
}

/** No `<webview>` is ever attached (the tag is off in the web preferences too). */
export function denyWebview(log: DenialLog): (event: Preventable) => void {
  return (event) => {
    event.preventDefault();
    log('refused to attach a webview');
  };
}

/**
 * The page never vetoes its own unload: a `beforeunload` handler that returns a value makes
 * Electron cancel the close (or a quit) without a word, so a hostile page kept its window open
 * and held the app's quit up. Main ignores the veto (`will-prevent-unload`), and says so.
 */
export function ignoreUnloadVeto(log: DenialLog): (event: Preventable) => void {
  return (event) => {
    event.preventDefault();
    log("refused the page's veto of its unload (beforeunload)");
  };
}

/** Nothing is downloaded to disk on the renderer's behalf. */
export function denyDownload(log: DenialLog): (event: Preventable, item: { getURL(): string }) => void {
  return (event, item) => {
    event.preventDefault();
    log(`refused a download: ${item.getURL()}`);
  };
}

/** Applies the navigation, window, webview and unload-veto denials to one webContents. */
export function policeContents(contents: PolicedContents, log: DenialLog): void {
  contents.setWindowOpenHandler(denyWindowOpen(log));
  contents.on('will-navigate', denyNavigation(log));
  contents.on('will-redirect', denyNavigation(log, 'a redirect'));
  contents.on('will-attach-webview', denyWebview(log));
  contents.on('will-prevent-unload', ignoreUnloadVeto(log));
}

/** Applies the permission and download denials to a session. */
export function policeSession(session: PolicedSession, log: DenialLog): void {
  session.setPermissionRequestHandler(denyPermissionRequest(log));
  session.setPermissionCheckHandler(denyPermissionCheck());
  session.on('will-download', denyDownload(log));
}

// Deny-everything handlers for the renderer, as plain functions over the few members of Electron's
// objects they use, so test/app/security-policy.test.ts runs them without the Electron binary.
// main.ts applies them to the default session and, through `app.on('web-contents-created')`, to
// every webContents that ever exists (the window's, and any other that would appear).

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
  setWindowOpenHandler(handler: (details: { url: string }) => DenyWindowOpen): void;
}

/** The members of `Session` the policy uses. Electron's `Session` satisfies it. */
export interface PolicedSession {
  setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
  setPermissionCheckHandler(handler: (contents: unknown, permission: string) => boolean): void;
  on(event: 'will-download', listener: (event: Preventable, item: { getURL(): string }) => void): unknown;
}

/** Every permission a page asks for (camera, notifications, clipboard, geolocation, …) is refused. */
export function denyPermissionRequest(log: DenialLog): (contents: unknown, permission: string, callback: (granted: boolean) => void) => void {
  return (_contents, permission, callback) => {
    log(`refused the permission request: ${permission}`);
    callback(false);
  };
}

/** Every synchronous permission check answers "not granted". */
export function denyPermissionCheck(): (contents: unknown, permission: string) => boolean {
  return () => false;
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

/** Nothing is downloaded to disk on the renderer's behalf. */
export function denyDownload(log: DenialLog): (event: Preventable, item: { getURL(): string }) => void {
  return (event, item) => {
    event.preventDefault();
    log(`refused a download: ${item.getURL()}`);
  };
}

/** Applies the navigation, window and webview denials to one webContents. */
export function policeContents(contents: PolicedContents, log: DenialLog): void {
  contents.setWindowOpenHandler(denyWindowOpen(log));
  contents.on('will-navigate', denyNavigation(log));
  contents.on('will-redirect', denyNavigation(log, 'a redirect'));
  contents.on('will-attach-webview', denyWebview(log));
}

/** Applies the permission and download denials to a session. */
export function policeSession(session: PolicedSession, log: DenialLog): void {
  session.setPermissionRequestHandler(denyPermissionRequest(log));
  session.setPermissionCheckHandler(denyPermissionCheck());
  session.on('will-download', denyDownload(log));
}

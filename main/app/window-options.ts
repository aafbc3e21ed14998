// The app window's security settings, as data: no Electron at run time (the import is type-only),
// so test/app/window-options.test.ts checks them without the Electron binary. main.ts passes
// them to `new BrowserWindow` and app-protocol.ts sends the CSP with every page it serves.
import type { BrowserWindowConstructorOptions, WebPreferences } from 'electron';

/**
 * The Content-Security-Policy of the app's page, sent as a response header by the `app:` protocol
 * (app-protocol.ts) and written in renderer-demo/index.html as a meta element. Nothing but the
 * page's own scripts, styles and images: no inline script or style, no eval, no network (the
 * renderer reaches main only through the preload's `window.chatty`), no plugins, frames, workers,
 * forms or `<base>`.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'none'",
  "object-src 'none'",
  "frame-src 'none'",
  "worker-src 'none'",
  "manifest-src 'none'",
  "media-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The renderer's web preferences: isolated, sandboxed, no Node anywhere (page, sub-frames,
 * workers), web security on, no `<webview>`, no insecure content, no experimental or extra Blink
 * features. The preload is the only code that sees Electron, and only `contextBridge`/`ipcRenderer`.
 */
export function webPreferences(preload: string): WebPreferences {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    experimentalFeatures: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    spellcheck: false,
  };
}

/** The one window: at least 800×600 (the renderer's smallest layout), shown once painted. */
export function windowOptions(preload: string): BrowserWindowConstructorOptions {
  return {
    width: 1100,
    height: 760,
    minWidth: 800,
    minHeight: 600,
    show: false,
    title: 'Chatty',
    backgroundColor: '#ffffff',
    webPreferences: webPreferences(preload),
  };
}

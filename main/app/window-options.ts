// The app window's security settings, as data: no Electron at run time (the import is type-only),
// so test/app/window-options.test.ts checks them without the Electron binary. main.ts passes
// `openAppWindow` Electron's BrowserWindow and app-protocol.ts sends the CSP with every page it serves.
import type { BrowserWindowConstructorOptions } from 'electron';

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

/** Electron's `BrowserWindow` as this module uses it: a constructor, passed in by main.ts. */
export type WindowConstructor<W> = new (options: BrowserWindowConstructorOptions) => W;

/**
 * Opens the one app window: at least 800×600 (the renderer's smallest layout), shown once painted.
 * Its web preferences: isolated, sandboxed, no Node anywhere (page, sub-frames, workers), web
 * security on, no `<webview>`, no insecure content, no experimental Blink features, no middle-click
 * (`Auxclick`) navigation. The preload is the only code that sees Electron, and only
 * `contextBridge`/`ipcRenderer`.
 *
 * The constructor is a parameter so that this module needs no Electron at run time (tests pass a
 * stand-in that records the options), and the options are written inline at the `new` so that
 * the Electron security scan (electronegativity, which reads the call's literal argument) sees them.
 */
export function openAppWindow<W>(BrowserWindow: WindowConstructor<W>, preload: string): W {
  return new BrowserWindow({
    width: 1100,
    height: 760,
    minWidth: 800,
    minHeight: 600,
    show: false,
    title: 'Chatty',
    backgroundColor: '#ffffff',
    webPreferences: {
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
      disableBlinkFeatures: 'Auxclick',
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: false,
    },
  });
}

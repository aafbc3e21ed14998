// The window's web preferences as an app passes them to its own `new BrowserWindow(…)`: the very
// ones openAppWindow gives the demo's window (read from it, so there is one list).
import type { BrowserWindowConstructorOptions, WebPreferences } from 'electron';
import { openAppWindow } from './window-options.js';

/** Records the options `new BrowserWindow(options)` is given, in Electron's place. */
class RecordedWindow {
  constructor(readonly options: BrowserWindowConstructorOptions) {}
}

/**
 * `webPreferences` for a window whose page is untrusted: isolated, sandboxed, no Node anywhere,
 * web security on, no webview, no insecure content, no experimental features, no middle-click
 * navigation, and `preload` (the package's `preloadPath`) as its only bridge to main.
 */
export function secureWebPreferences(preload: string): WebPreferences {
  return { ...openAppWindow(RecordedWindow, preload).options.webPreferences };
}

// The app's menu, as data (Electron-free; main.ts builds it with `Menu.buildFromTemplate`).
// Electron's default menu has View › Reload (Ctrl+R, F5 on some platforms) and Force Reload: a
// reload of the page denies every approval waiting in it and withdraws every question, silently.
// This menu has no reload at all (nor DevTools' own reload, once packaged: no DevTools then).
import type { MenuItemConstructorOptions } from 'electron';

export interface AppMenuOptions {
  /** `process.platform`: macOS gets the app menu (About, Hide, Quit) first. */
  platform: NodeJS.Platform;
  /** Whether View has Toggle Developer Tools (`!app.isPackaged`). */
  devTools: boolean;
}

/**
 * File (Close, Quit), Edit (undo, cut, copy, paste, select all: the text fields' shortcuts),
 * View (zoom, full screen, and DevTools when `devTools`), Window. No Reload, no Force Reload.
 */
export function appMenuTemplate(options: AppMenuOptions): MenuItemConstructorOptions[] {
  const view: MenuItemConstructorOptions[] = [{ role: 'resetZoom' }, { role: 'zoomIn' }, { role: 'zoomOut' }, { type: 'separator' }, { role: 'togglefullscreen' }];
  if (options.devTools) view.push({ type: 'separator' }, { role: 'toggleDevTools' });
  return [
    ...(options.platform === 'darwin' ? [{ role: 'appMenu' } as const] : []),
    { role: 'fileMenu' },
    { role: 'editMenu' },
    { label: 'View', submenu: view },
    { role: 'windowMenu' },
  ];
}

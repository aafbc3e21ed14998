import { ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import type { BridgeHost } from './bridge/bridge-host.js';

/**
 * Binds the Electron-free BridgeHost to ipcMain and the one app window: each invoke channel is
 * handled with the sending frame checked by the host; events go to the window's webContents; a
 * reload or navigation of its top frame resets the host (waiting approvals denied, questions
 * withdrawn), and the window closing detaches it. Returns the unbind function.
 */
export function bindBridge(host: BridgeHost, contents: WebContents): () => void {
  for (const channel of host.invokeChannels) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, payload: unknown) => {
      const frame = event.senderFrame;
      // Only this window's top frame: another webContents (there should be none) is refused too.
      const sender = {
        url: frame?.url ?? '',
        isMainFrame: event.sender === contents && frame !== null && frame === event.sender.mainFrame,
      };
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
  const onDestroyed = (): void => host.detachWindow('the window was closed');
  contents.on('did-navigate', onNavigation);
  contents.on('render-process-gone', onCrash);
  contents.once('destroyed', onDestroyed);
  return () => {
    if (!contents.isDestroyed()) {
      contents.off('did-navigate', onNavigation);
      contents.off('render-process-gone', onCrash);
      contents.off('destroyed', onDestroyed);
    }
    host.detachWindow('the app is closing');
    for (const channel of host.invokeChannels) ipcMain.removeHandler(channel);
  };
}

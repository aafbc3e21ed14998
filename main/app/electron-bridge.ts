import { ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import type { BridgeHost } from './bridge/bridge-host.js';

/**
 * Binds the Electron-free BridgeHost to ipcMain: each invoke channel is handled with the sender
 * frame checked by the host, and edge rows go to the one window's webContents.
 */
export function bindBridge(host: BridgeHost, contents: WebContents): () => void {
  for (const channel of host.invokeChannels) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, payload: unknown) => {
      const frame = event.senderFrame;
      const sender = { url: frame?.url ?? '', isMainFrame: frame !== null && frame === event.sender.mainFrame };
      return host.handle(channel, sender, payload);
    });
  }
  const stopEdge = host.forwardEdgeRows((channel, payload) => {
    if (!contents.isDestroyed()) contents.send(channel, payload);
  });
  return () => {
    stopEdge();
    for (const channel of host.invokeChannels) ipcMain.removeHandler(channel);
  };
}

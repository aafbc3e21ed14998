// The preload: a thin, allow-listed bridge exposed as `window.chatty`. It runs sandboxed, where
// only 'electron' can be required, so the channel names are written here and mirror
// main/app/bridge/contract.ts (the browser test proves they agree). No logic lives here.
import electron = require('electron');
import type { IpcRendererEvent } from 'electron';

const { contextBridge, ipcRenderer } = electron;

const CHANNELS = {
  gatewayInfo: 'chatty:gateway-info',
  edgeRow: 'chatty:edge-row',
} as const;

function subscribe(channel: string, listener: (payload: unknown) => void): () => void {
  const wrapped = (_event: IpcRendererEvent, payload: unknown): void => listener(payload);
  ipcRenderer.on(channel, wrapped);
  return () => {
    ipcRenderer.removeListener(channel, wrapped);
  };
}

contextBridge.exposeInMainWorld('chatty', {
  gatewayInfo: () => ipcRenderer.invoke(CHANNELS.gatewayInfo),
  onEdgeRow: (listener: (row: unknown) => void) => subscribe(CHANNELS.edgeRow, listener),
});

/** A bridge host on a real gateway, for the tests of what the host decides: who calls, what it records. */
import { BridgeHost, type IpcSender } from '../../main/app/bridge/bridge-host.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { AGENT } from '../broker/helpers.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { DEFAULT_PAGE_URL } from '../../main/app/index.js';
import { StandInWebContents } from './electron-stand-in/electron.js';

/** The window's page, as the host's guard is told it; `top` is its top frame. */
export const TRUSTED = 'http://127.0.0.1:1/renderer-demo/index.html';
export const top: IpcSender = { url: TRUSTED, isMainFrame: true };

/** A stand-in window whose top frame is at the bridge's default page. */
export function windowAtPage(): StandInWebContents {
  const contents = new StandInWebContents();
  contents.mainFrame.url = DEFAULT_PAGE_URL;
  return contents;
}

/** A real gateway whose virtual agent `agent` is the broker tests' JSON-plan agent (a real child per task). */
export async function planGateway(): Promise<RunningGateway> {
  const gw = await startGateway(undefined, { broker: { cancelGraceMs: 1_000, log: () => {} } });
  gw.gateway.withVirtualAgent('agent', new LocalRunner({ command: process.execPath, args: ['--import', 'tsx', AGENT], reapGraceMs: 1_000 }));
  return gw;
}

/** A host on `gw` (no window attached) and what it sends once one is: `attach()` attaches it, `seen` finds a sent payload. */
export function recordingHost(gw: RunningGateway): {
  host: BridgeHost;
  events: { channel: string; payload: unknown }[];
  attach(): void;
  seen<T>(channel: string, pred: (payload: T) => boolean): T | undefined;
} {
  const host = new BridgeHost(gw.gateway, { socketPath: gw.socketPath, tokenPath: gw.tokenPath }, (url) => url === TRUSTED);
  const events: { channel: string; payload: unknown }[] = [];
  return {
    host,
    events,
    attach: () => host.attachWindow((channel, payload) => void events.push({ channel, payload })),
    seen: <T>(channel: string, pred: (payload: T) => boolean) => events.find((e) => e.channel === channel && pred(e.payload as T))?.payload as T | undefined,
  };
}

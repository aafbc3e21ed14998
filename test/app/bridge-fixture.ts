/** A bridge host on a real gateway, for the tests of what the host decides: who calls, what it records. */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BridgeHost, type IpcSender } from '../../main/app/bridge/bridge-host.js';
import { LocalRunner } from '../../main/broker/runners/index.js';
import { AGENT } from '../broker/helpers.js';
import type { ModuleDirectory, ProtocolGatewayOptions } from '../../main/gateway/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { DEFAULT_PAGE_URL } from '../../main/app/index.js';
import type { PendingApproval, TaskUpdate } from '../../main/app/bridge/contract.js';
import { plan } from '../broker/helpers.js';
import { StandInIpcMain, StandInWebContents } from './electron-stand-in/electron.js';

/** The window's page, as the host's guard is told it; `top` is its top frame. */
export const TRUSTED = 'http://127.0.0.1:1/renderer-demo/index.html';
export const top: IpcSender = { url: TRUSTED, isMainFrame: true };

/** A stand-in window whose top frame is at the bridge's default page. */
export function windowAtPage(): StandInWebContents {
  const contents = new StandInWebContents();
  contents.mainFrame.url = DEFAULT_PAGE_URL;
  return contents;
}

/**
 * A started gateway whose agents' workspace (`broker.root.workspaceRoot`) is a fresh folder of its
 * own, removed at its close: a bridge is attached only to a gateway whose workspaces it knows.
 */
export async function gatewayWithWorkspace(modules?: ModuleDirectory, options: ProtocolGatewayOptions = {}): Promise<RunningGateway> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-agents-')));
  const gw = await startGateway(modules, { ...options, broker: { ...options.broker, root: { workspaceRoot: workspace, ...options.broker?.root } } });
  return {
    ...gw,
    close: async () => {
      await gw.close();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** A real gateway whose virtual agent `agent` is the broker tests' JSON-plan agent (a real child per task). */
export async function planGateway(): Promise<RunningGateway> {
  const gw = await gatewayWithWorkspace(undefined, { broker: { cancelGraceMs: 1_000, log: () => {} } });
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

const ipc = new StandInIpcMain();

/**
 * Starts `exec <command>` on a `planGateway` agent from `from`'s page; resolves with the name (in
 * `windows`) of the window its approval was shown in (and approved there), or 'nowhere' when the
 * task ended without one.
 */
export async function approvalShownOn(from: StandInWebContents, command: string, windows: Record<string, StandInWebContents>): Promise<string> {
  const { taskId } = (await ipc.invoke('chatty:start-task', from, from.mainFrame, { agent: 'agent', prompt: plan({ approve: { kind: 'exec', command_or_path: command } }) })) as { taskId: string };
  const shown = Object.entries(windows).map(async ([name, contents]) => {
    const view = await contents.sentOn<PendingApproval>('chatty:approval', (p) => p.commandOrPath === command);
    await ipc.invoke('chatty:answer-approval', contents, contents.mainFrame, { requestId: view.requestId, verdict: 'approved' });
    return name;
  });
  const ended = from.sentOn<TaskUpdate>('chatty:task', (u) => u.type === 'ended' && u.taskId === taskId).then(() => 'nowhere');
  return Promise.race([...shown, ended]);
}

import type { ProtocolGateway, StartedGateway } from '../../gateway/index.js';
import { surfacesOf } from '../../gateway/modules.js';
import { BRIDGE_CHANNELS, InvokeRequestSchemas, type GatewayInfo, type InvokeChannel } from './contract.js';

/** Who sent an IPC message, as the Electron layer reports it. */
export interface IpcSender {
  /** The URL of the sending frame. */
  url: string;
  /** Whether the sender is the window's top frame (not an iframe). */
  isMainFrame: boolean;
}

export class BridgeRefusal extends Error {
  override readonly name = 'BridgeRefusal';
}

/**
 * The main-process side of the bridge, free of Electron so it runs under test: checks the sender,
 * validates the payload, answers. `main/app/electron-bridge.ts` binds it to `ipcMain`.
 */
export class BridgeHost {
  constructor(
    private readonly gateway: ProtocolGateway,
    private readonly started: StartedGateway,
    /** The only page allowed to call: the demo window's own URL (its origin and path). */
    private readonly trustedUrl: (url: string) => boolean,
  ) {}

  readonly invokeChannels = Object.keys(InvokeRequestSchemas) as InvokeChannel[];

  async handle(channel: string, sender: IpcSender, payload: unknown): Promise<unknown> {
    if (!sender.isMainFrame || !this.trustedUrl(sender.url)) {
      throw new BridgeRefusal(`refused ${channel}: sender ${sender.url} is not the trusted window`);
    }
    if (!isInvokeChannel(channel)) throw new BridgeRefusal(`refused: unknown channel ${channel}`);
    const parsed = InvokeRequestSchemas[channel].safeParse(payload);
    if (!parsed.success) throw new BridgeRefusal(`refused ${channel}: invalid payload`);
    switch (channel) {
      case BRIDGE_CHANNELS.gatewayInfo:
        return this.gatewayInfo();
    }
  }

  /** Pushes edge rows to the renderer through `send`; returns the unsubscribe function. */
  forwardEdgeRows(send: (channel: string, payload: unknown) => void): () => void {
    return this.gateway.onEdge((row) => send(BRIDGE_CHANNELS.edgeRow, row));
  }

  private gatewayInfo(): GatewayInfo {
    return {
      socketPath: this.started.socketPath,
      tokenPath: this.started.tokenPath,
      modules: this.gateway.registry.list().map((m) => ({ name: m.name, version: m.version, surfaces: surfacesOf(m) })),
    };
  }
}

function isInvokeChannel(channel: string): channel is InvokeChannel {
  return Object.hasOwn(InvokeRequestSchemas, channel);
}

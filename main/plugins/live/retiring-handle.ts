import { ModuleHandle, type InvokeOptions, type InvokeRequest } from '../handle/index.js';
import type { PluginMetadata, ToolDefinition, ToolOutcome } from '../worker/protocol.js';

/**
 * A module handle that can be retired rather than closed: a reload swaps a new instance in and
 * retires the old one, which finishes every call it was given (and any a caller looked it up for
 * just before the swap) before its worker stops. `unload` still closes at once.
 */
export class RetiringHandle extends ModuleHandle {
  /** Calls given to this instance and not settled yet. */
  private active = 0;
  private retired: { graceOver: boolean; closed: () => void } | undefined;

  override metadata(): Promise<PluginMetadata> {
    return this.track(super.metadata());
  }

  override listTools(): Promise<ToolDefinition[]> {
    return this.track(super.listTools());
  }

  override invokeTool(req: InvokeRequest, options?: InvokeOptions): Promise<ToolOutcome> {
    return this.track(super.invokeTool(req, options));
  }

  /** Calls given to this instance that have not settled. */
  get callsInFlight(): number {
    return this.active;
  }

  /**
   * Closes once no call is in flight; resolves when it has. Calls still arrive until the end of
   * this turn of the event loop (a request that looked the module up before the swap calls it a
   * few microtasks later) and are served like the others.
   */
  retire(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.retired = { graceOver: false, closed: resolve };
      setImmediate(() => {
        this.retired!.graceOver = true;
        this.closeIfIdle();
      });
    });
  }

  private track<T>(call: Promise<T>): Promise<T> {
    this.active++;
    const settled = (): void => {
      this.active--;
      this.closeIfIdle();
    };
    call.then(settled, settled);
    return call;
  }

  private closeIfIdle(): void {
    const retired = this.retired;
    if (!retired?.graceOver || this.active > 0) return;
    this.retired = undefined;
    void this.close().then(retired.closed);
  }
}

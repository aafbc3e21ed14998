import type { PluginGrantDecision, PluginGrantHandler, PluginGrantRequest } from './types.js';

/** How a request put to the desk ended: decided, or withdrawn before anyone decided it. */
export type GrantOutcome = PluginGrantDecision | 'withdrawn';

interface OpenRequest {
  readonly request: Readonly<PluginGrantRequest>;
  readonly settle: (outcome: GrantOutcome) => void;
  /** Set while a handler has it: aborted when it is withdrawn, or when that handler is removed or replaced. */
  handed: AbortController | undefined;
}

/**
 * The registry's grant desk (`registry.grants`): where a plugin's asks wait for a person. One
 * handler at a time (the terminal prompt, the desktop popover); setting another replaces it.
 * Requests made while no handler is set wait and are handed to the next handler set; a request a
 * removed or replaced handler had not answered is handed to the next one (its signal aborts), so a
 * closed window never strands a plugin. A handler that throws (or rejects) denies.
 */
export class PluginGrants {
  private handler: PluginGrantHandler | undefined;
  private readonly open = new Map<string, OpenRequest>();
  private count = 0;

  /** Sets the handler (replacing any other); returns the function that removes it. */
  onRequest(handler: PluginGrantHandler): () => void {
    this.release();
    this.handler = handler;
    for (const open of this.open.values()) this.hand(open);
    return () => {
      if (this.handler !== handler) return;
      this.release();
      this.handler = undefined;
    };
  }

  /** The requests not decided yet (handed to a handler or waiting for one), oldest first. */
  waiting(): PluginGrantRequest[] {
    return [...this.open.values()].map((open) => copyOf(open.request));
  }

  /**
   * Puts a plugin's asks to the desk (the registry's side). Resolves with the decision, or
   * `'withdrawn'` once `signal` aborts first; it never rejects.
   */
  ask(request: Omit<PluginGrantRequest, 'id'>, signal?: AbortSignal): Promise<GrantOutcome> {
    if (signal?.aborted) return Promise.resolve('withdrawn');
    const id = `grant-${++this.count}`;
    const frozen: Readonly<PluginGrantRequest> = Object.freeze({ ...request, id, asks: Object.freeze(request.asks.map((ask) => Object.freeze({ ...ask }))) as PluginGrantRequest['asks'] });
    return new Promise<GrantOutcome>((resolve) => {
      const onAbort = (): void => settle('withdrawn');
      const settle = (outcome: GrantOutcome): void => {
        const open = this.open.get(id);
        if (!open) return;
        this.open.delete(id);
        signal?.removeEventListener('abort', onAbort);
        open.handed?.abort(new Error(outcome === 'withdrawn' ? 'the request was withdrawn' : `the request was ${outcome}`));
        resolve(outcome);
      };
      const open: OpenRequest = { request: frozen, settle, handed: undefined };
      this.open.set(id, open);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.hand(open);
    });
  }

  /** Withdraws every open request (the registry is closing). */
  withdrawAll(): void {
    for (const open of [...this.open.values()]) open.settle('withdrawn');
  }

  private hand(open: OpenRequest): void {
    const handler = this.handler;
    if (!handler || open.handed) return;
    const handed = new AbortController();
    open.handed = handed;
    const answer = (decision: unknown): void => {
      if (handed.signal.aborted) return; // withdrawn, or its handler was removed: the next one decides
      open.settle(decision === 'granted' ? 'granted' : 'denied');
    };
    let decision: PluginGrantDecision | Promise<PluginGrantDecision>;
    try {
      decision = handler(copyOf(open.request), handed.signal);
    } catch {
      decision = 'denied';
    }
    Promise.resolve(decision).then(answer, () => answer('denied'));
  }

  /** The current handler's undecided requests go back to waiting for the next one. */
  private release(): void {
    for (const open of this.open.values()) {
      const handed = open.handed;
      if (!handed) continue;
      open.handed = undefined;
      handed.abort(new Error('the grant handler was replaced'));
    }
  }
}

/** A handler's own copy: what it changes is not what the registry decides on. */
function copyOf(request: Readonly<PluginGrantRequest>): PluginGrantRequest {
  return { ...request, asks: request.asks.map((ask) => ({ ...ask })) };
}

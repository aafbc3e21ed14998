import type { AbortLike } from '../jsonrpc/index.js';

/**
 * What the gateway needs to know of a loaded module. `ModuleRegistry` (main/plugins) provides it;
 * the gateway depends on this shape only, so it can be built and tested on its own.
 */
export interface ServedModule {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly protocols: { readonly mcp: boolean; readonly a2a: boolean };
}

/** A tool as the guest's `list-tools` describes it (`parameters-schema` is JSON text). */
export interface ModuleTool {
  readonly name: string;
  readonly description: string;
  readonly parametersSchema: string;
}

/** The guest's `invoke-tool` answer: its `result`; `ok: false` is its `tool-error`. */
export type ModuleToolOutcome =
  | { readonly ok: true; readonly value: { readonly content: string } }
  | { readonly ok: false; readonly error: { readonly kind: string; readonly message: string } };

/**
 * A module whose tools the gateway can call (MCP). A call that fails outside the guest's own
 * `result` rejects with an error carrying a string `kind` (main/plugins' `PluginCallError`).
 */
export interface CallableModule extends ServedModule {
  listTools(): Promise<readonly ModuleTool[]>;
  /**
   * Aborting `options.signal` (an `AbortSignal`, or the gateway's cheaper `CallAbort`) cancels the
   * call: it rejects with `kind` `'cancelled'` (a module may ignore it and answer).
   */
  invokeTool(
    request: { name: string; argumentsJson: string; callId: string; caller?: string | undefined },
    options?: { signal?: AbortLike | undefined },
  ): Promise<ModuleToolOutcome>;
}

/**
 * A module not served yet: being built (its routes answer 503 with `Retry-After`), whose build
 * failed (`reason`), or whose capabilities are not granted (`ungranted`: 403, `reason` names the
 * missing grant and how to give it).
 */
export interface PendingModule {
  readonly name: string;
  readonly state: 'building' | 'failed' | 'ungranted';
  readonly reason?: string | undefined;
}

export interface ModuleDirectory {
  list(): readonly ServedModule[];
  /** A loaded module by name; a directory without it serves no MCP surface. */
  get?(name: string): CallableModule | undefined;
  /** Modules still being built or whose build failed: listed by `GET /`, answered 503 on their routes. */
  pending?(): readonly PendingModule[];
  /** Hears modules come, go and be reloaded (`ModuleRegistry.onChange`); returns the unsubscribe. */
  onChange?(listener: (change: { name: string; change: 'served' | 'reloaded' | 'unloaded' | 'pending' }) => void): () => void;
  /** The files that decide what it grants (the grants file, each plugins.lock): an agent's write of one is tagged `gateway-config`. */
  configFiles?(): readonly string[];
}

/** Seconds a client is told to wait (`Retry-After`) before asking a module that is still being built again. */
export const BUILDING_RETRY_AFTER_SECONDS = 5;

/** The surfaces a module is reachable on, for the index. */
export function surfacesOf(module: ServedModule): string[] {
  const surfaces: string[] = [];
  if (module.protocols.mcp) surfaces.push(`/mcp/${module.name}`, `/mcp/${module.name}/sse`);
  return surfaces;
}

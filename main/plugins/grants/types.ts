/**
 * What a plugin is granted, per plugin and per component digest (issue 20 item 3). `logging` and
 * `config` are always allowed and never asked; these four are put to a person.
 */
export const GRANTED_CAPABILITIES = ['file', 'llm', 'billing', 'network'] as const;
export type GrantedCapability = (typeof GRANTED_CAPABILITIES)[number];

/** One thing a plugin asks for, with the detail a person decides on ("read files under ./data", "api.github.com:443"). */
export interface CapabilityAsk {
  capability: GrantedCapability;
  detail: string;
}

/** A plugin's asks not yet granted for its component, put to the desk. */
export interface PluginGrantRequest {
  /** Unique in this process (`grant-1`, `grant-2`, …). */
  id: string;
  plugin: string;
  version: string;
  /** The component's digest: `sha256:<64 hex>` of its `plugin.wasm`. */
  digest: string;
  asks: CapabilityAsk[];
  /** The module's folder (what `./data` is relative to, and where a look-alike of a known plugin comes from). */
  dir?: string | undefined;
}

export type PluginGrantDecision = 'granted' | 'denied';

/** Decides one request. `signal` aborts when the request is withdrawn (the module unloaded, the registry closed). */
export type PluginGrantHandler = (request: PluginGrantRequest, signal: AbortSignal) => PluginGrantDecision | Promise<PluginGrantDecision>;

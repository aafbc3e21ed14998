/** A module the gateway forwards to the remote runner, as its manifest describes it. */
export interface ForwardedModule {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly executionMode?: string;
}

/**
 * The modules to forward, structurally: `ModuleRegistry` (main/plugins) has both methods. A
 * directory without them forwards nothing.
 */
export interface RemoteModuleDirectory {
  /** The module named `name` when its manifest says `execution_mode = "remote"` or `"remote_only"`. */
  remote?(name: string): ForwardedModule | undefined;
  /** Every such module, in name order. */
  remoteModules?(): readonly ForwardedModule[];
}

export const CARD_PATH_V1 = '.well-known/agent-card.json';
export const CARD_PATH_V03 = '.well-known/agent.json';
export const TEXT_MODES = ['text/plain'];

/** `A2A-Version` values of the two dialects. */
export const A2A_V1 = '1.0';
export const A2A_V03_CARD = '0.3.0';

/** The one skill a forwarded module advertises: the module itself. */
function skillOf(m: ForwardedModule): { id: string; name: string; description: string; tags: string[]; examples: string[] } {
  return {
    id: m.name,
    name: m.name,
    description: describe(m),
    tags: [m.name, 'remote'],
    examples: [],
  };
}

function describe(m: ForwardedModule): string {
  return m.description !== '' ? m.description : `${m.name}, run by the remote runner`;
}

/** The A2A 1.0 card (`/a2a/{name}/.well-known/agent-card.json`): one JSON-RPC interface, version 1.0. */
export function cardV1(m: ForwardedModule, endpoint: string): Record<string, unknown> {
  return {
    name: m.name,
    description: describe(m),
    supportedInterfaces: [{ url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: A2A_V1 }],
    version: m.version,
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: TEXT_MODES,
    defaultOutputModes: TEXT_MODES,
    skills: [skillOf(m)],
  };
}

/** The A2A 0.3 card (`/a2a/{name}/.well-known/agent.json`): `url`, `protocolVersion`, `preferredTransport`. */
export function cardV03(m: ForwardedModule, endpoint: string): Record<string, unknown> {
  return {
    protocolVersion: A2A_V03_CARD,
    name: m.name,
    description: describe(m),
    url: endpoint,
    preferredTransport: 'JSONRPC',
    version: m.version,
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: TEXT_MODES,
    defaultOutputModes: TEXT_MODES,
    skills: [skillOf(m)],
  };
}

/** The gateway's aggregated card (`/.well-known/agent.json`): forwarded modules only, never a plugin. */
export function aggregatedCard(modules: readonly ForwardedModule[], endpointOf: (name: string) => string): Record<string, unknown> {
  return {
    schema_version: '0.1',
    gateway: true,
    agents: modules.map((m) => ({
      name: m.name,
      displayName: m.name,
      description: describe(m),
      version: m.version,
      skills: [skillOf(m)],
      capabilities: { streaming: true },
      origin: 'remote',
      url: endpointOf(m.name),
    })),
  };
}

import { z } from 'zod';

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
export const TEXT_MODES: readonly string[] = ['text/plain'];

/** `A2A-Version` values of the two dialects. */
export const A2A_V1 = '1.0' as const;
export const A2A_V03_CARD = '0.3.0' as const;

/** A skill as both dialects' cards carry it. */
export const CardSkill = z.strictObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  examples: z.array(z.string()),
});
export type CardSkill = z.infer<typeof CardSkill>;

const Capabilities = z.strictObject({ streaming: z.literal(true), pushNotifications: z.literal(false) });

/** The A2A 1.0 card, as `agent-card.json` serves it. */
export const AgentCardV1 = z.strictObject({
  name: z.string(),
  description: z.string(),
  supportedInterfaces: z.array(z.strictObject({ url: z.string(), protocolBinding: z.literal('JSONRPC'), protocolVersion: z.literal(A2A_V1) })),
  version: z.string(),
  capabilities: Capabilities,
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(CardSkill),
});
export type AgentCardV1 = z.infer<typeof AgentCardV1>;

/** The A2A 0.3 card, as `agent.json` serves it. */
export const AgentCardV03 = z.strictObject({
  protocolVersion: z.literal(A2A_V03_CARD),
  name: z.string(),
  description: z.string(),
  url: z.string(),
  preferredTransport: z.literal('JSONRPC'),
  version: z.string(),
  capabilities: Capabilities,
  defaultInputModes: z.array(z.string()),
  defaultOutputModes: z.array(z.string()),
  skills: z.array(CardSkill),
});
export type AgentCardV03 = z.infer<typeof AgentCardV03>;

/** The gateway's aggregated card at `/.well-known/agent.json`: the forwarded modules, never a plugin. */
export const AggregatedCard = z.strictObject({
  schema_version: z.literal('0.1'),
  gateway: z.literal(true),
  agents: z.array(
    z.strictObject({
      name: z.string(),
      displayName: z.string(),
      description: z.string(),
      version: z.string(),
      skills: z.array(CardSkill),
      capabilities: z.strictObject({ streaming: z.literal(true) }),
      origin: z.literal('remote'),
      url: z.string(),
    }),
  ),
});
export type AggregatedCard = z.infer<typeof AggregatedCard>;

/** The one skill a forwarded module advertises: the module itself. */
function skillOf(m: ForwardedModule): CardSkill {
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
export function cardV1(m: ForwardedModule, endpoint: string): AgentCardV1 {
  return {
    name: m.name,
    description: describe(m),
    supportedInterfaces: [{ url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: A2A_V1 }],
    version: m.version,
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: [...TEXT_MODES],
    defaultOutputModes: [...TEXT_MODES],
    skills: [skillOf(m)],
  };
}

/** The A2A 0.3 card (`/a2a/{name}/.well-known/agent.json`): `url`, `protocolVersion`, `preferredTransport`. */
export function cardV03(m: ForwardedModule, endpoint: string): AgentCardV03 {
  return {
    protocolVersion: A2A_V03_CARD,
    name: m.name,
    description: describe(m),
    url: endpoint,
    preferredTransport: 'JSONRPC',
    version: m.version,
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: [...TEXT_MODES],
    defaultOutputModes: [...TEXT_MODES],
    skills: [skillOf(m)],
  };
}

/** The gateway's aggregated card (`/.well-known/agent.json`): forwarded modules only, never a plugin. */
export function aggregatedCard(modules: readonly ForwardedModule[], endpointOf: (name: string) => string): AggregatedCard {
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

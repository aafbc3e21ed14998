/** The MCP protocol versions this gateway speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedVersion(version: string): version is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

/** `initialize`: the client's requested version when supported, else the newest supported. */
export function negotiateVersion(requested: string): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

// The capability request the grant tests put to a real desk (`PluginGrants.ask`) as the registry
// would: the issue's own example, "text-tools 0.3.1 (sha256:ab12…) asks for: read files under
// ~/notes; network: api.github.com:443", with `overrides` for the field a test is about.
import type { PluginGrantRequest } from '../../main/plugins/grants/index.js';

/** A `sha256:<64 hex>` digest whose short form (12 hex digits) is `sha256:ab12cd34ef56…`. */
export const GRANT_DIGEST = `sha256:ab12cd34ef56${'9f'.repeat(26)}`;

export function grantRequest(overrides: Partial<Omit<PluginGrantRequest, 'id'>> = {}): Omit<PluginGrantRequest, 'id'> {
  return {
    plugin: 'text-tools',
    version: '0.3.1',
    digest: GRANT_DIGEST,
    asks: [
      { capability: 'file', detail: 'read files under ~/notes' },
      { capability: 'network', detail: 'api.github.com:443' },
    ],
    ...overrides,
  };
}

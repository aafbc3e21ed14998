import { hasHidden } from '../../display/index.js';
import { shortDigest, type PluginGrantRequest } from '../../plugins/grants/index.js';
import { shownOneLine } from './describe.js';

/**
 * `text-tools 0.3.1 (sha256:ab12cd34ef56…) asks for:` — the plugin, its version and a short digest,
 * each a one-line field through the display rule (a manifest is the plugin author's words).
 */
export function describeGrant(request: Pick<PluginGrantRequest, 'plugin' | 'version' | 'digest'>): string {
  return `plugin ${shownOneLine(request.plugin)} ${shownOneLine(request.version)} (${shownOneLine(shortDigest(request.digest))}) asks for:`;
}

/**
 * The lines under a grant's first line: each ask on its own line (`    network: api.github.com:443`),
 * the whole digest (to compare with `sha256sum plugin.wasm`), and a warning when any field holds
 * hidden characters.
 */
export function grantDetails(request: PluginGrantRequest): string[] {
  const lines = request.asks.map((ask) => `    ${ask.capability}: ${shownOneLine(ask.detail)}`);
  lines.push(`  digest: ${shownOneLine(request.digest)}`);
  if (grantHidden(request)) lines.push("  !! HIDDEN CHARACTERS: shown as <U+XXXX>; the plugin's request holds characters you could not see");
  return lines;
}

/** Whether any field of the request holds a character the display rule shows as its code point. */
export function grantHidden(request: PluginGrantRequest): boolean {
  return [request.plugin, request.version, request.digest, ...request.asks.map((a) => a.detail)].some(hasHidden);
}

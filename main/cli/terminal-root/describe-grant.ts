import { hasHidden } from '../../display/index.js';
import { askReach, capabilitiesOf, shortDigest, type PluginGrantRequest } from '../../plugins/grants/index.js';
import { shownOneLine } from './describe.js';
import { fitColumns } from './safe-text.js';

/** Up to this many asks are read at a glance; past it, the line above the prompt says how many `y` grants. */
const GLANCE = 8;
/** A version as a version reads: letters, digits and `. + _ -`, not too long for the first line. */
const PLAIN_VERSION = /^[0-9A-Za-z.+_-]{1,40}$/;
/** How many columns of a version that is not plain the first line shows. */
const VERSION_COLUMNS = 40;

/**
 * `text-tools 0.3.1 (sha256:ab12cd34ef56…) asks for:` — the plugin, its version and a short digest,
 * each a one-line field through the display rule (a manifest is the plugin author's words). A
 * version that is not a plain token ("0.3.1 (sha256:…)", or a very long one) is shown cut, between
 * ⟦ ⟧, so that it cannot pass for the digest after it nor push it off the line.
 */
export function describeGrant(request: Pick<PluginGrantRequest, 'plugin' | 'version' | 'digest'>): string {
  return `plugin ${shownOneLine(request.plugin)} ${shortVersion(request.version)} (${shownOneLine(shortDigest(request.digest))}) asks for:`;
}

/**
 * The lines under a grant's first line: each ask on its own line (`    network: api.github.com:443`,
 * a network ask with what it reaches when the entry alone does not say it), the whole version when
 * the first line cut it, the whole digest (to compare with `sha256sum plugin.wasm`), the plugin's folder, a warning when
 * any field holds hidden characters, and — past a glance — how many asks a `y` grants.
 */
export function grantDetails(request: PluginGrantRequest): string[] {
  const lines = request.asks.map((ask) => {
    const reach = askReach(ask);
    return `    ${ask.capability}: ${shownOneLine(ask.detail)}${reach ? ` (${reach})` : ''}`;
  });
  if (!PLAIN_VERSION.test(request.version)) lines.push(`  version: ⟦${shownOneLine(request.version)}⟧`);
  lines.push(`  digest: ${shownOneLine(request.digest)}`);
  if (request.dir !== undefined) lines.push(`  folder: ${shownOneLine(request.dir)}`);
  if (grantHidden(request)) lines.push("  !! HIDDEN CHARACTERS: shown as <U+XXXX>; the plugin's request holds characters you could not see");
  if (request.asks.length > GLANCE) {
    const counts = capabilitiesOf(request.asks).map((cap) => `${cap}: ${count(request.asks.filter((ask) => ask.capability === cap).length)}`);
    lines.push(`  ${shownOneLine(request.plugin)} (${shownOneLine(shortDigest(request.digest))}) asks for ${count(request.asks.length)} things in all (${counts.join(', ')}): y grants every one`);
  }
  return lines;
}

/** Whether any field of the request holds a character the display rule shows as its code point. */
function grantHidden(request: PluginGrantRequest): boolean {
  return [request.plugin, request.version, request.digest, request.dir ?? '', ...request.asks.map((a) => a.detail)].some(hasHidden);
}

function shortVersion(version: string): string {
  return PLAIN_VERSION.test(version) ? version : `⟦${fitColumns(shownOneLine(version), VERSION_COLUMNS)}⟧`;
}

const count = (n: number): string => n.toLocaleString('en');

import type { Manifest } from '../manifest.js';
import { DEFAULT_PORTS, parseAllowEntry } from '../network/allow-entry.js';
import type { Providers } from '../providers.js';
import { unversioned } from '../world.js';
import type { CapabilityAsk, GrantedCapability } from './types.js';

/** What a person reads for each capability a component may reach through the embedder. */
const PROVIDED: Readonly<Record<'llm' | 'billing', string>> = {
  llm: "complete prompts with the embedder's model provider",
  billing: "open sessions on and report usage to the embedder's credit ledger",
};

/**
 * What a plugin asks for, beyond `logging` and `config` (always allowed): the union of its
 * manifest's tables and what its component imports, each with the detail a person decides on.
 *
 * - `file`: the manifest's `[files] root` ("read files under ./data").
 * - `network`: one ask per `[network] allow` entry ("api.github.com:443").
 * - `llm`, `billing`: the component imports `chatty:plugin/llm` (or `billing`) and the embedder
 *   has a provider for it. Every component built with componentize-js imports the whole world, so
 *   the import alone says nothing; without a provider there is nothing to grant (its calls answer
 *   "not configured" either way), so nobody is asked about it.
 */
export function pluginAsks(input: { manifest: Manifest; imports: readonly string[]; providers: Providers }): CapabilityAsk[] {
  const { manifest, imports, providers } = input;
  const asks: CapabilityAsk[] = [];
  if (manifest.files) asks.push({ capability: 'file', detail: `read files under ${shownRoot(manifest.files.root)}` });
  const imported = new Set(imports.map(unversioned));
  for (const cap of ['llm', 'billing'] as const) {
    if (imported.has(`chatty:plugin/${cap}`) && providers[cap]) asks.push({ capability: cap, detail: PROVIDED[cap] });
  }
  for (const entry of manifest.network?.allow ?? []) asks.push({ capability: 'network', detail: entry });
  return asks;
}

/** `./data`, `./` for the module directory itself. */
function shownRoot(root: string): string {
  const trimmed = root.replace(/\/+$/, '');
  return trimmed === '' || trimmed === '.' ? './' : `./${trimmed.replace(/^\.\//, '')}`;
}

/** The capabilities among `asks`, each once, in the order first asked. */
export function capabilitiesOf(asks: readonly CapabilityAsk[]): GrantedCapability[] {
  return [...new Set(asks.map((ask) => ask.capability))];
}

/** Two asks are the same grant: same capability, same detail. */
export function sameAsk(a: CapabilityAsk, b: CapabilityAsk): boolean {
  return a.capability === b.capability && a.detail === b.detail;
}

/** "file (read files under ./data); network (api.github.com:443, *.example.org)": one line for a log or a reason. */
export function describeAsks(asks: readonly CapabilityAsk[]): string {
  return capabilitiesOf(asks)
    .map((cap) => `${cap} (${asks.filter((ask) => ask.capability === cap).map((ask) => ask.detail).join(', ')})`)
    .join('; ');
}

/**
 * What a `network` ask reaches, in words, for the person deciding on it: a `*.` entry any name
 * under it (not the name itself), an entry without a port only 80 and 443. `''` for any other ask.
 */
export function askReach(ask: CapabilityAsk): string {
  if (ask.capability !== 'network') return '';
  let entry;
  try {
    entry = parseAllowEntry(ask.detail);
  } catch {
    return '';
  }
  const names = entry.kind === 'suffix' ? `any name under ${entry.host}, not ${entry.host} itself` : '';
  const ports = entry.port === null ? `ports ${DEFAULT_PORTS.join(' and ')} only` : '';
  return [names, ports].filter(Boolean).join('; ');
}

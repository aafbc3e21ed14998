import { DEFAULT_PORTS, parseAllowEntry, type AllowEntry } from './allow-entry.js';

/**
 * A plugin's granted `[network] allow` list (deny by default): which host and port a request may
 * name. An entry without a port allows 80 and 443 only.
 */
export class AllowList {
  readonly entries: readonly AllowEntry[];

  constructor(allow: readonly string[]) {
    this.entries = allow.map(parseAllowEntry);
  }

  /** The entry that lets a request reach `host` (as `URL.hostname` writes it) on `port`, if any. */
  match(host: string, port: number): AllowEntry | undefined {
    return this.entries.find((e) => portMatches(e, port) && hostMatches(e, host));
  }
}

function portMatches(entry: AllowEntry, port: number): boolean {
  return entry.port === null ? DEFAULT_PORTS.includes(port) : entry.port === port;
}

function hostMatches(entry: AllowEntry, host: string): boolean {
  switch (entry.kind) {
    case 'name':
    case 'ip':
      return host === entry.host;
    case 'suffix':
      return host.endsWith(`.${entry.host}`);
  }
}

import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * One entry of a manifest's `[network] allow` list, read once at load:
 *
 * - `api.example.com` — that name exactly (not its subdomains);
 * - `*.example.org` — any name ending in `.example.org` (not `example.org` itself);
 * - `127.0.0.1`, `[::1]` — that address, written as an IP literal;
 *
 * each with an optional `:port`, in ASCII (an internationalized name in its `xn--` form: what a
 * person granting it reads is where it goes). Without a port an entry allows the standard ports of http and
 * https only (80 and 443): a service on another port must be named with it.
 */
export interface AllowEntry {
  /** The entry as written, for logs and grant requests. */
  readonly text: string;
  readonly kind: 'name' | 'suffix' | 'ip';
  /** Lower-case ASCII name, the suffix without `*.`, or the address as URL.hostname writes it (IPv6 in brackets). */
  readonly host: string;
  /** null: 80 and 443. */
  readonly port: number | null;
}

/** The ports an entry without `:port` allows. */
export const DEFAULT_PORTS: readonly number[] = [80, 443];

/** Thrown by `parseAllowEntry` with why the entry is not one. */
export class AllowEntryError extends Error {}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Reads one allow-list entry; throws `AllowEntryError` saying what is wrong with it. */
export function parseAllowEntry(text: string): AllowEntry {
  if (/[\u0000-\u0020\u007f]/.test(text)) throw new AllowEntryError('has a space or control character');
  if (text.length === 0) throw new AllowEntryError('is empty');
  if (text.includes('://')) throw new AllowEntryError('has a scheme; write only the host and an optional port, e.g. "api.example.com:443"');
  if (/[/?#@]/.test(text)) throw new AllowEntryError('has a path, query or user name; write only the host and an optional port');
  const { host, port } = splitPort(text);
  if (host.startsWith('[')) {
    if (!host.endsWith(']') || isIP(host.slice(1, -1)) !== 6) throw new AllowEntryError('is not an IPv6 address in brackets');
    return { text, kind: 'ip', host: canonicalIp(host), port };
  }
  if (isIP(host) === 4) return { text, kind: 'ip', host: canonicalIp(host), port };
  if (isIP(host) === 6) throw new AllowEntryError('is an IPv6 address: write it in brackets, e.g. "[::1]:8080"');
  const wildcard = host.startsWith('*.');
  const name = wildcard ? host.slice(2) : host;
  if (name.includes('*')) throw new AllowEntryError('has a "*" that is not a leading "*." (only "*.example.org" is a wildcard)');
  const ascii = domainToASCII(name);
  if (ascii === '' || ascii.endsWith('.')) throw new AllowEntryError('is not a host name');
  // The entry is what a person reads when granting it: "аpi.github.com" (a Cyrillic "а") would
  // read as GitHub and reach someone else. Only the ASCII (xn--) form says where a request goes.
  if (/[^\x21-\x7e]/.test(name)) {
    const asReached = `${wildcard ? '*.' : ''}${ascii}${port === null ? '' : `:${port}`}`;
    throw new AllowEntryError(`is not ASCII: write it as it is reached, ${JSON.stringify(asReached)}, so the person granting it reads that name and not a look-alike`);
  }
  const labels = ascii.split('.');
  if (ascii.length > 253 || !labels.every((l) => LABEL.test(l))) throw new AllowEntryError('is not a host name (labels of letters, digits and "-")');
  // "127.1" or "0x7f.1" is an address to a URL parser, not a name: only dotted quads are addresses here.
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1]!)) {
    throw new AllowEntryError('ends in a number but is not an IPv4 address of four decimal parts');
  }
  if (wildcard && labels.length < 2) throw new AllowEntryError('is a wildcard over a whole top-level domain; name at least "*.example.org"');
  return { text, kind: wildcard ? 'suffix' : 'name', host: ascii, port };
}

function splitPort(text: string): { host: string; port: number | null } {
  const colon = text.lastIndexOf(':');
  // An IPv6 literal's colons are inside its brackets; a bare IPv6 address has no port to split.
  if (colon < 0 || (text.startsWith('[') ? colon < text.indexOf(']') : text.indexOf(':') !== colon)) return { host: text, port: null };
  const digits = text.slice(colon + 1);
  const port = /^[0-9]{1,5}$/.test(digits) ? Number(digits) : NaN;
  if (!(port >= 1 && port <= 65535)) throw new AllowEntryError(`has a port "${digits}" that is not a number from 1 to 65535`);
  return { host: text.slice(0, colon), port };
}

/** An address as WHATWG URL writes a request's host (IPv4 dotted, IPv6 compressed in brackets). */
function canonicalIp(host: string): string {
  return new URL(`http://${host}/`).hostname;
}

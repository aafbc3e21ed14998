// What origin the approvals page may have: a custom scheme (one neither Chromium nor Electron
// already serves: taking a built-in one over with `protocol.handle` answers that scheme for the
// whole session, and a page on a web origin is whatever that site serves) and a lower-case ASCII
// host (Chromium lower-cases and IDNA-encodes a standard scheme's host, so any other is never
// requested as written).

/** Schemes Chromium or Electron already serves or reserves (and every `chrome…` one). */
const KNOWN_SCHEMES: ReadonlySet<string> = new Set([
  'about', 'blob', 'cid', 'content', 'data', 'devtools', 'file', 'filesystem', 'ftp', 'gopher', 'http', 'https', 'intent',
  'isolated-app', 'javascript', 'mailto', 'sms', 'tel', 'urn', 'view-source', 'ws', 'wss', 'googlechrome', 'android-app',
]);

/** A plain scheme name: lower-case letters, digits, + . -, a letter first. */
const SCHEME = /^[a-z][a-z0-9+.-]*$/;
/** Lower-case ASCII labels, dot-separated: what Chromium keeps as it is. */
const HOST = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** `scheme` as a custom one, or an error saying why not (`what` names the option). */
export function checkCustomScheme(scheme: string, what: string): void {
  if (!SCHEME.test(scheme)) throw new Error(`${what}: '${scheme}' is not a URL scheme (lower-case letters, digits, + . -, a letter first)`);
  if (KNOWN_SCHEMES.has(scheme) || scheme.startsWith('chrome')) {
    throw new Error(`${what}: '${scheme}' is a scheme Chromium or Electron already knows; the approvals page needs a custom one (like app or chatty-ui)`);
  }
}

/** `host` (as the URL was written) as Chromium keeps it, or an error saying why not. */
export function checkCustomHost(host: string, what: string): void {
  if (!HOST.test(host)) throw new Error(`${what}: the host must be lower-case ASCII letters, digits, - and dots (no port), not '${host}'`);
}

/** `url` (the bridge's `pageUrl`) on a custom scheme and a lower-case ASCII host, or an error saying why not. */
export function checkCustomPageUrl(url: string): void {
  const what = `attachDesktopBridge: pageUrl ${url}`;
  const scheme = /^([^:/?#]*):/.exec(url)?.[1];
  if (scheme === undefined) throw new Error(`${what} is not a URL`);
  checkCustomScheme(scheme, what);
  // The host as written (Node keeps a custom scheme's host as it is, Chromium would not).
  const host = /^[^:]*:\/\/([^/?#]*)/.exec(url)?.[1] ?? '';
  checkCustomHost(host, what);
  // The bridge compares the committed URL with pageUrl exactly: a path Chromium would rewrite
  // (`app://chatty` committed as `app://chatty/`, `./` and `../` resolved, escapes normalised)
  // would never be the page, and the window would leave it at its first load.
  const rest = url.slice(`${scheme}://${host}`.length);
  const segments = /^([^?]*)(?:\?[A-Za-z0-9._~!$&()*+,;=:@/?-]*)?$/.exec(rest)?.[1]?.split('/').slice(1);
  const plain = segments !== undefined && rest.startsWith('/') && segments.every((segment, i) => (segment === '' ? i === segments.length - 1 : /^[A-Za-z0-9._~!$&()*+,;=:@-]+$/.test(segment) && segment !== '.' && segment !== '..'));
  if (!plain) throw new Error(`${what} is not written as Chromium will commit it: give a path from / of plain names (no . or .. segments, no empty ones, no escapes, no fragment), like ${scheme}://${host}/index.html`);
}

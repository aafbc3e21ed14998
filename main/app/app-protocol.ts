// The `app:` protocol that serves the renderer's files, decided here without Electron (main.ts
// binds `serveAppRequest` with `protocol.handle`). A custom protocol rather than `file:`: the page
// gets an origin of its own (`app://chatty`, so `'self'` in the CSP means our files and nothing
// else on the disk), its responses carry the CSP as a header (`file:` responses have no headers to
// set, and `session.webRequest.onHeadersReceived` does not see them), and only the renderer's own
// files can be fetched: never a path outside the allow-list below.
import { join } from 'node:path';
import { readRegularFile } from '../owner-only/regular-file.js';
import { CONTENT_SECURITY_POLICY } from './window-options.js';

export const APP_SCHEME = 'app';
export const APP_HOST = 'chatty';

/** The origin the `app:` files are served on: `app://chatty` unless an embedding app chooses another (app-pages.ts). */
export interface AppOrigin {
  scheme: string;
  host: string;
}
const DEFAULT_ORIGIN: AppOrigin = { scheme: APP_SCHEME, host: APP_HOST };
/** The page the window loads; the bridge answers only its top frame at exactly this URL. */
export const APP_PAGE_URL = `${APP_SCHEME}://${APP_HOST}/renderer-demo/index.html`;

/**
 * The scheme's privileges, for `protocol.registerSchemesAsPrivileged` before `ready`: standard
 * (an origin, relative URLs) and secure (a secure context, like https). Nothing else: no fetch or
 * CORS access, no service workers, no CSP bypass, no streaming.
 */
export const APP_SCHEME_PRIVILEGES = { standard: true, secure: true } as const;

/** The content type of each extension an `app:` file may have (what a folder admits is its own pattern's say). */
export const APP_CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

/**
 * What may be served: the page and its assets (`renderer-demo/<name>.html|css|svg|png`), the
 * compiled page scripts (`out/renderer-demo/<name>.js`), and the public renderer modules they
 * import: `out/renderer/<name>.js`, `out/renderer/approvals/<name>.js` and the display rule,
 * `out/main/display/<name>.js` (browser modules with no Node imports; nothing else of out/main).
 * A plain name in each folder; no sources, no source maps, nothing else of the package.
 */
const NAME = '[A-Za-z0-9_-][A-Za-z0-9._-]*';
const ALLOWED: readonly RegExp[] = [
  new RegExp(`^renderer-demo/${NAME}\\.(html|css|svg|png)$`),
  new RegExp(`^out/renderer-demo/${NAME}\\.(js)$`),
  new RegExp(`^out/renderer/(?:approvals/)?${NAME}\\.(js)$`),
  new RegExp(`^out/main/display/${NAME}\\.(js)$`),
];

export interface AppAsset {
  /** Path relative to the package root, `/`-separated. */
  path: string;
  contentType: string;
}

/** The file an `app:` URL names (on `origin`), or undefined when it may not be served. */
export function appAsset(url: string, origin: AppOrigin = DEFAULT_ORIGIN): AppAsset | undefined {
  const pathname = appPathname(url, origin);
  if (pathname === undefined) return undefined;
  const path = pathname.replace(/^\//, '');
  for (const allowed of ALLOWED) {
    const match = allowed.exec(path);
    if (match) {
      const contentType = APP_CONTENT_TYPES[match[1] ?? ''];
      return contentType === undefined ? undefined : { path, contentType };
    }
  }
  return undefined;
}

/**
 * The path an `app://chatty/…` URL (or one on `origin`) names (`/index.html`), or undefined for any
 * other scheme or host, a user or password, or a percent-escape (refused outright: an encoded slash
 * or dot never reaches the file system). Each folder's own pattern then decides which names it serves.
 */
export function appPathname(url: string, origin: AppOrigin = DEFAULT_ORIGIN): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  // (`URL.origin` is "null" for a scheme Node does not know: the scheme and host are compared.)
  if (parsed.protocol !== `${origin.scheme}:` || parsed.host !== origin.host || parsed.username !== '' || parsed.password !== '') return undefined;
  if (parsed.pathname.includes('%')) return undefined;
  return parsed.pathname;
}

/** The headers of every successful response: the CSP, no sniffing, no referrer, no framing. */
export function appResponseHeaders(contentType: string): Record<string, string> {
  return {
    'Content-Type': contentType,
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'X-Frame-Options': 'DENY',
  };
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array | string;
}

/**
 * Answers one `app:` request from the files under `root` (the package root): 200 with the file
 * and the security headers, 404 for anything not on the allow-list or not there, 405 for a method
 * other than GET or HEAD.
 */
export async function serveAppRequest(request: { url: string; method: string }, root: string, origin: AppOrigin = DEFAULT_ORIGIN): Promise<AppResponse> {
  const plain = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };
  if (request.method !== 'GET' && request.method !== 'HEAD') return { status: 405, headers: plain, body: 'method not allowed' };
  const asset = appAsset(request.url, origin);
  const served = asset && (await serveAppFile(join(root, ...asset.path.split('/')), asset.contentType, request.method));
  return served ?? { status: 404, headers: plain, body: 'not found' };
}

/** The largest file served on `app:`: a page, a script, an image; anything bigger is refused (404). */
export const MAX_APP_FILE_BYTES = 16 * 1024 * 1024;

/** How `serveAppFile` judges a file beyond being regular, unlinked and small enough. */
export interface AppFileRule {
  /**
   * Refuse a file with more than one name (a hard link): a page file linked into the agents'
   * workspace is rewritten by a plain write there. Not for the package's own files: pnpm's store
   * hard-links every file it installs.
   */
  oneName?: boolean;
}

/** 200 with the file at `path` and the security headers (no body for HEAD), or undefined when it cannot be served. */
export async function serveAppFile(path: string, contentType: string, method: string, rule: AppFileRule = {}): Promise<AppResponse | undefined> {
  const body = await readAppFile(path, rule);
  if (body === undefined) return undefined;
  return { status: 200, headers: appResponseHeaders(contentType), body: method === 'HEAD' ? '' : body };
}

/**
 * The file at `path` when it is a regular file of at most MAX_APP_FILE_BYTES, read through the one
 * descriptor that was checked (owner-only/regular-file.ts). Its own name may not be a link
 * (O_NOFOLLOW: a page file linked into the agents' workspace would be theirs to write), and a fifo
 * is opened without waiting for a writer and then refused: else each request for it held a thread
 * of libuv's pool. With `rule.oneName`, a file with a second name anywhere (st_nlink > 1) is refused too.
 */
async function readAppFile(path: string, rule: AppFileRule): Promise<Uint8Array | undefined> {
  const read = await readRegularFile(path, { maxBytes: MAX_APP_FILE_BYTES, oneName: rule.oneName === true });
  return read.ok ? read.bytes : undefined;
}

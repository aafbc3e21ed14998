// The `app:` protocol that serves the renderer's files, decided here without Electron (main.ts
// binds it with `protocol.handle`, app-pages.ts). A custom protocol rather than `file:`: the page
// gets an origin of its own (`app://chatty`, so `'self'` in the CSP means our files and nothing
// else on the disk), its responses carry the CSP as a header (`file:` responses have no headers to
// set, and `session.webRequest.onHeadersReceived` does not see them), and only the renderer's own
// files can be fetched: never a path outside the allow-list below.
import { realpathSync } from 'node:fs';
import { emptyServedFiles, readServedFolder, realFolderInside, type ServedFiles } from './served-files.js';
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
 * A plain name in each folder; no sources, no source maps, nothing else of the package. Read into
 * memory once (`readPackageFiles`), as the pages folder is.
 */
const NAME = '[A-Za-z0-9_-][A-Za-z0-9._-]*';
const PACKAGE_FOLDERS: readonly { folder: string; names: RegExp }[] = [
  { folder: 'renderer-demo', names: new RegExp(`^${NAME}\\.(html|css|svg|png)$`) },
  { folder: 'out/renderer-demo', names: new RegExp(`^${NAME}\\.(js)$`) },
  { folder: 'out/renderer', names: new RegExp(`^${NAME}\\.(js)$`) },
  { folder: 'out/renderer/approvals', names: new RegExp(`^${NAME}\\.(js)$`) },
  { folder: 'out/main/display', names: new RegExp(`^${NAME}\\.(js)$`) },
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
  const slash = path.lastIndexOf('/');
  const folder = PACKAGE_FOLDERS.find((f) => f.folder === path.slice(0, slash));
  const match = folder?.names.exec(path.slice(slash + 1));
  const contentType = match ? APP_CONTENT_TYPES[match[1] ?? ''] : undefined;
  return contentType === undefined ? undefined : { path, contentType };
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
 * This package's allow-listed files under `root` (the package root), read into memory now
 * (served-files.ts): each served folder's real path is resolved once and must lie in `root`'s.
 */
export function readPackageFiles(root: string): ServedFiles {
  const realRoot = realpathSync(root);
  const files = emptyServedFiles();
  for (const { folder, names } of PACKAGE_FOLDERS) {
    const real = realFolderInside(realRoot, folder);
    if (real !== undefined) readServedFolder({ real, urlPrefix: `/${folder}`, names }, APP_CONTENT_TYPES, files);
  }
  return files;
}

const PLAIN_HEADERS = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };

/**
 * Answers one `app:` request from `files` (read at start: `readPackageFiles`, the pages folder's):
 * 200 with the file and the security headers (no body for HEAD), 404 for anything not among them
 * (with why, when the file was there but refused), 405 for a method other than GET or HEAD.
 */
export function serveAppRequest(request: { url: string; method: string }, files: ServedFiles, origin: AppOrigin = DEFAULT_ORIGIN): AppResponse & { why?: string } {
  if (request.method !== 'GET' && request.method !== 'HEAD') return { status: 405, headers: PLAIN_HEADERS, body: 'method not allowed' };
  const pathname = appPathname(request.url, origin);
  const file = pathname === undefined ? undefined : files.files.get(pathname);
  if (file === undefined) {
    const why = pathname === undefined ? undefined : files.refused.get(pathname);
    return { status: 404, headers: PLAIN_HEADERS, body: 'not found', ...(why === undefined ? {} : { why }) };
  }
  return { status: 200, headers: appResponseHeaders(file.contentType), body: request.method === 'HEAD' ? '' : file.bytes };
}

export { MAX_APP_FILE_BYTES } from './served-files.js';

// What an app's window loads, on the `app:` scheme: the app's own pages (a folder it names) beside
// this package's renderer files (the demo page, the `./renderer` module, the display rule), all
// served by one handler with the CSP and the other headers of app-protocol.ts. Free of Electron:
// `handleAppProtocol` takes the session, and test/app drives the handler with plain `Request`s.
import { checkCustomHost, checkCustomScheme } from './custom-origin.js';
import { PACKAGE_ROOT } from './package-root.js';
import { servePagesFolder } from './pages-guard.js';
import { APP_CONTENT_TYPES, APP_HOST, APP_SCHEME, APP_SCHEME_PRIVILEGES, readPackageFiles, serveAppRequest, type AppOrigin } from './app-protocol.js';
import { readServedFolder } from './served-files.js';

/** The window's origin: `app://chatty`. */
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/** For `protocol.registerSchemesAsPrivileged([APP_SCHEME_REGISTRATION])`, before `app` is ready. */
export const APP_SCHEME_REGISTRATION = { scheme: APP_SCHEME, privileges: { ...APP_SCHEME_PRIVILEGES } };

/**
 * The registration of the scheme of an origin the app chose (`AppPagesOptions.origin`), with the
 * same privileges (standard, secure). Electron keeps only the last `registerSchemesAsPrivileged`
 * call: pass it in the app's one call, beside the app's own schemes.
 */
export function appSchemeRegistration(scheme: string = APP_SCHEME): typeof APP_SCHEME_REGISTRATION {
  checkCustomScheme(scheme, 'appSchemeRegistration');
  return { scheme, privileges: { ...APP_SCHEME_PRIVILEGES } };
}

/**
 * `<scheme>://<host>` as an `AppOrigin`: a custom scheme and a lower-case ASCII host
 * (custom-origin.ts); anything else (a path, a user, no host, a web or built-in scheme) is refused
 * with what is wrong.
 */
function parseOrigin(origin: string | undefined): AppOrigin {
  if (origin === undefined) return { scheme: APP_SCHEME, host: APP_HOST };
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  const plain = parsed && parsed.host !== '' && parsed.username === '' && parsed.password === '' && (parsed.pathname === '' || parsed.pathname === '/') && parsed.search === '' && parsed.hash === '';
  if (!parsed || !plain || !origin.startsWith(`${parsed.protocol}//`)) throw new Error(`app protocol: origin must be <scheme>://<host> (like ${APP_ORIGIN}), not '${origin}'`);
  const scheme = parsed.protocol.slice(0, -1);
  checkCustomScheme(scheme, 'app protocol: origin');
  checkCustomHost(origin.slice(`${scheme}://`.length).replace(/\/$/, ''), 'app protocol: origin');
  return { scheme, host: parsed.host };
}

export { PACKAGE_ROOT, preloadPath } from './package-root.js';

/** One plain file name, directly in the pages folder: no sub-folders, no dot files (the extension is group 1). */
const PAGE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.(html|css|m?js|svg|png)$/;

export interface AppPagesOptions {
  /**
   * The folder of the app's own pages (`app://chatty/<name>.html|css|js|mjs|svg|png`); none when
   * absent. Never the agents' workspace, a folder in it, or one holding it: refused at start
   * (pages-guard.ts) while a bridge's gateway works there.
   */
  pages?: string;
  /** Each refused request (not 200), e.g. the main-process log. */
  log?: (line: string) => void;
  /**
   * The origin served, `<scheme>://<host>` (default `app://chatty`, `APP_ORIGIN`): another when the
   * app's own pages already use `app:` (electron-serve's default). Register its scheme with
   * `appSchemeRegistration(scheme)` and give the bridge the page's URL (`pageUrl`).
   */
  origin?: string;
}

/**
 * The handler for `session.protocol.handle('app', …)`. It serves what it read when it was made
 * (served-files.ts): the files of the app's `pages` folder (`app://chatty/<name>`, from the real
 * path `servePagesFolder` checked) and this package's allow-listed renderer files (app-protocol.ts:
 * `out/renderer/…`, the demo page…); 404 for anything else, 405 for a method other than GET and
 * HEAD. Every page comes with the CSP.
 */
export function appProtocolHandler(options: AppPagesOptions = {}): (request: Request) => Promise<Response> {
  const origin = parseOrigin(options.origin); // a bad origin fails here, at start, not at the first request
  // Never in the agents' workspace; read from the real path checked, once.
  const pages = options.pages === undefined ? undefined : servePagesFolder(options.pages);
  const files = readPackageFiles(PACKAGE_ROOT);
  if (pages !== undefined) readServedFolder({ real: pages, urlPrefix: '', names: PAGE_NAME }, APP_CONTENT_TYPES, files);
  return async (request) => {
    const answer = serveAppRequest({ url: request.url, method: request.method }, files, origin);
    if (answer.status !== 200) options.log?.(`app protocol: ${answer.status} ${request.url}${answer.why === undefined ? '' : ` (${answer.why})`}`);
    const body = typeof answer.body === 'string' ? answer.body : Uint8Array.from(answer.body);
    return new Response(body, { status: answer.status, headers: answer.headers });
  };
}

/** The part of Electron's `Session` serving uses. */
export interface ProtocolSession {
  protocol: { handle(scheme: string, handler: (request: Request) => Promise<Response>): void };
}

/**
 * Serves the `app:` scheme on `session` (register it first with `APP_SCHEME_REGISTRATION`): the
 * window then loads `app://chatty/index.html` from `pages`, with its scripts, and may import the
 * package's renderer module from `app://chatty/out/renderer/index.js`. With `origin`, the same on
 * that origin's scheme and host.
 */
export function handleAppProtocol(session: ProtocolSession, options: AppPagesOptions = {}): void {
  session.protocol.handle(parseOrigin(options.origin).scheme, appProtocolHandler(options));
}

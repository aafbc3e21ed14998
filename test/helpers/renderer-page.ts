import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { chromium, type Browser, type Page } from 'playwright-core';
import { APP_HOST, APP_SCHEME, readPackageFiles, serveAppRequest } from '../../main/app/app-protocol.js';
import { REPO_ROOT } from './cli.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian Chromium, headless, with the flags this machine's closed network needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

let built: string | undefined;

/**
 * The renderer and the preload as `npm run build` makes them: tsc with tsconfig.build.json's
 * options, over that config's files under renderer-demo/ and preload/ (and what they import),
 * into a scratch package laid out like the real one (`renderer-demo/index.html`, `style.css`…,
 * `out/renderer-demo/*.js`, `out/preload/index.cjs`). Built once per process; returns its root.
 */
export function builtApp(): string {
  if (built !== undefined) return built;
  const config = ts.getParsedCommandLineOfConfigFile(join(REPO_ROOT, 'tsconfig.build.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(`tsconfig.build.json: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    },
  });
  if (!config) throw new Error('tsconfig.build.json could not be read');
  const root = mkdtempSync(join(tmpdir(), 'chatty-renderer-build-'));
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const ours = (file: string): boolean => /^(renderer-demo|preload)\//.test(relative(REPO_ROOT, file).split(sep).join('/'));
  const program = ts.createProgram({ rootNames: config.fileNames.filter(ours), options: { ...config.options, outDir: join(root, 'out') } });
  const result = program.emit();
  const errors = result.diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (result.emitSkipped || errors.length > 0) throw new Error(`the renderer build failed: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`);
  mkdirSync(join(root, 'renderer-demo'));
  for (const file of readdirSync(join(REPO_ROOT, 'renderer-demo'))) {
    if (!file.endsWith('.ts')) copyFileSync(join(REPO_ROOT, 'renderer-demo', file), join(root, 'renderer-demo', file));
  }
  built = root;
  return root;
}

/**
 * Serves the built app page on loopback exactly as the app: protocol serves it (main/app's
 * `serveAppRequest`: the same allow-list, the same headers, the CSP among them), at the same paths
 * (`/renderer-demo/index.html`, `/out/renderer-demo/*.js`). `extraPages` adds test pages (or
 * scripts) by path, served plainly, without the app's headers.
 */
export async function serveDemo(extraPages: Record<string, string> = {}): Promise<{ base: string; server: Server }> {
  const files = readPackageFiles(builtApp());
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const extra = extraPages[path];
    if (extra !== undefined) {
      res.writeHead(200, { 'content-type': path.endsWith('.js') ? 'text/javascript' : 'text/html' });
      res.end(extra);
      return;
    }
    const answer = serveAppRequest({ url: `${APP_SCHEME}://${APP_HOST}${path}`, method: req.method ?? 'GET' }, files);
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, server };
}

/** The built preload (CommonJS), exactly what Electron would load. */
export function preloadSource(): string {
  return readFileSync(join(builtApp(), 'out', 'preload', 'index.cjs'), 'utf8');
}

export interface IpcLoopback {
  /** Called for each `ipcRenderer.invoke` (what `ipcMain.handle` would get) with the sending frame's URL and whether it is the top frame. */
  handle(channel: string, sender: { url: string; isMainFrame: boolean }, payload: unknown): Promise<unknown>;
}

/**
 * Installs the real preload (`source`: the build's, or an installed package's) in every frame of
 * the page, with only `ipcRenderer` and `contextBridge` replaced by a loopback to this process.
 * `emit` plays `webContents.send`.
 */
export async function installPreload(page: Page, ipc: IpcLoopback, source?: string): Promise<{ emit: (channel: string, payload: unknown) => Promise<void> }> {
  await page.exposeBinding('__chattyIpcInvoke', async (source, channel: string, payload: unknown) =>
    ipc.handle(channel, { url: source.frame.url(), isMainFrame: source.frame === source.page.mainFrame() }, payload),
  );
  const standIn = `
    (() => {
      const listeners = new Map();
      window.__chattyIpcEmit = (channel, payload) => {
        for (const l of listeners.get(channel) ?? []) l({ sender: null }, payload);
      };
      const electron = {
        contextBridge: { exposeInMainWorld: (key, api) => { Object.defineProperty(window, key, { value: Object.freeze(api) }); } },
        ipcRenderer: {
          invoke: (channel, payload) => window.__chattyIpcInvoke(channel, payload),
          on: (channel, l) => { if (!listeners.has(channel)) listeners.set(channel, new Set()); listeners.get(channel).add(l); },
          removeListener: (channel, l) => { listeners.get(channel)?.delete(l); },
        },
      };
      const require = (name) => { if (name !== 'electron') throw new Error('sandboxed preload cannot require ' + name); return electron; };
      const module = { exports: {} };
      (function (require, module, exports) { ${source ?? preloadSource()}
      })(require, module, module.exports);
    })();`;
  await page.addInitScript({ content: standIn });
  return {
    emit: async (channel, payload) => {
      await page.evaluate(([c, p]) => (window as unknown as { __chattyIpcEmit(c: string, p: unknown): void }).__chattyIpcEmit(c, p), [channel, payload] as const);
    },
  };
}

/** What the loopback needs of the bridge host: its calls, and the window lifecycle Electron reports. */
export interface WindowHost extends IpcLoopback {
  attachWindow(send: (channel: string, payload: unknown) => void): void;
  windowReset(reason?: string): void;
  pageGone(reason?: string): void;
}

/**
 * The app window as main/app/electron-bridge.ts binds it, with Playwright in Electron's place: the
 * real preload in the page, `ipcRenderer.invoke` reaching `host.handle`, `webContents.send` as
 * `emit`, the top frame's navigation request (a reload) for `did-navigate`, and the page
 * closing as `destroyed`.
 */
export async function bindWindow(page: Page, host: WindowHost): Promise<void> {
  const { emit } = await installPreload(page, host);
  // Like webContents.send: a message to a page that is going away is lost, never an error here.
  host.attachWindow((channel, payload) => void emit(channel, payload).catch(() => {}));
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) host.windowReset('the window was reloaded');
  });
  page.on('close', () => host.pageGone('the window was closed'));
}

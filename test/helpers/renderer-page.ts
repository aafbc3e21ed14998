import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import ts from 'typescript';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from './cli.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian Chromium, headless, with the flags this machine's closed network needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

function transpile(path: string, module: ts.ModuleKind): string {
  const source = readFileSync(join(REPO_ROOT, path), 'utf8');
  return ts.transpileModule(source, {
    compilerOptions: { module, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: path,
  }).outputText;
}

/**
 * Serves the real app page on loopback: index.html and style.css as they are, each renderer
 * module (`renderer-demo/*.ts`) compiled as the build compiles it, where the page expects the
 * build output (`/out/renderer-demo/*.js`). `extraPages` adds pages (or scripts) by path.
 */
export async function serveDemo(extraPages: Record<string, string> = {}): Promise<{ base: string; server: Server }> {
  const modules = new Map<string, string>();
  for (const file of readdirSync(join(REPO_ROOT, 'renderer-demo'))) {
    if (file.endsWith('.ts')) modules.set(`/out/renderer-demo/${file.replace(/\.ts$/, '.js')}`, transpile(`renderer-demo/${file}`, ts.ModuleKind.ESNext));
  }
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const send = (type: string, body: string): void => {
      res.writeHead(200, { 'content-type': type });
      res.end(body);
    };
    if (path === '/renderer-demo/index.html') return send('text/html', readFileSync(join(REPO_ROOT, 'renderer-demo/index.html'), 'utf8'));
    if (path === '/renderer-demo/style.css') return send('text/css', readFileSync(join(REPO_ROOT, 'renderer-demo/style.css'), 'utf8'));
    const module = modules.get(path);
    if (module !== undefined) return send('text/javascript', module);
    const extra = extraPages[path];
    if (extra !== undefined) return send(path.endsWith('.js') ? 'text/javascript' : 'text/html', extra);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, server };
}

/** The compiled preload (CommonJS), exactly what Electron would load. */
export function preloadSource(): string {
  return transpile('preload/index.cts', ts.ModuleKind.CommonJS);
}

export interface IpcLoopback {
  /** Called for each `ipcRenderer.invoke` (what `ipcMain.handle` would get) with the sending frame's URL and whether it is the top frame. */
  handle(channel: string, sender: { url: string; isMainFrame: boolean }, payload: unknown): Promise<unknown>;
}

/**
 * Installs the real preload in every frame of the page, with only `ipcRenderer` and
 * `contextBridge` replaced by a loopback to this process. `emit` plays `webContents.send`.
 */
export async function installPreload(page: Page, ipc: IpcLoopback): Promise<{ emit: (channel: string, payload: unknown) => Promise<void> }> {
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
      (function (require, module, exports) { ${preloadSource()} })(require, module, module.exports);
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
  detachWindow(reason?: string): void;
}

/**
 * The app window as main/app/electron-bridge.ts binds it, with Playwright in Electron's place: the
 * real preload in the page, `ipcRenderer.invoke` reaching `host.handle`, `webContents.send` as
 * `emit`, the top frame starting a navigation (a reload) as `did-start-navigation`, and the page
 * closing as `destroyed`.
 */
export async function bindWindow(page: Page, host: WindowHost): Promise<void> {
  const { emit } = await installPreload(page, host);
  // Like webContents.send: a message to a page that is going away is lost, never an error here.
  host.attachWindow((channel, payload) => void emit(channel, payload).catch(() => {}));
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) host.windowReset('the window was reloaded');
  });
  page.on('close', () => host.detachWindow('the window was closed'));
}

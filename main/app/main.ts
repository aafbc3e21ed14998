// The Electron shell: the composition root, and the only code that imports 'electron' (with
// electron-bridge.ts). It stays thin: every decision is in an Electron-free module beside it
// (window-options, security-policy, app-protocol, lifecycle, app-modules), tested in test/app.
import { app, BrowserWindow, protocol, session, type Session, type WebContents } from 'electron';
import electronLog from 'electron-log/node.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledAgents, detectWorkspace } from '../agents/bundled.js';
import { access, ProtocolGateway } from '../gateway/index.js';
import { APP_PAGE_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, serveAppRequest } from './app-protocol.js';
import { agentWorkspaceDir, openAppModules, userPluginsDir } from './app-modules.js';
import { BridgeHost } from './bridge/bridge-host.js';
import { bindBridge } from './electron-bridge.js';
import { bringForward, QUIT_SIGNALS, quitAfterStopping } from './lifecycle.js';
import { policeContents, policeSession } from './security-policy.js';
import { openAppWindow } from './window-options.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const preloadPath = join(root, 'out', 'preload', 'index.cjs');

// The main-process log: electron-log's Node entry, which (unlike its Electron entry) opens no IPC
// channel for renderers to log through. `<logs>/main.log`, as electron-log would name it.
const log = electronLog.create({ logId: 'chatty-main' });
log.transports.file.resolvePathFn = () => join(app.getPath('logs'), 'main.log');
log.errorHandler.startCatching({ showDialog: false });
const deny = (line: string): void => log.warn(`security: ${line}`);

// One app at a time: a second launch brings the first one's window forward and ends.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // Before `ready`: the page's own origin (app://chatty), served from the package only.
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { ...APP_SCHEME_PRIVILEGES } }]);

  let window: BrowserWindow | undefined;
  // What launch() has set up, undone in reverse order when the app quits or the launch fails.
  const undo: (() => unknown)[] = [];
  const stop = async (): Promise<void> => {
    for (let step = undo.pop(); step; step = undo.pop()) {
      try {
        await step();
      } catch (err) {
        log.error('stopping:', err);
      }
    }
  };

  app.on('second-instance', () => bringForward(window));
  // Every webContents that ever exists, the window's and any other, gets the denials.
  app.on('web-contents-created', (_event, contents: WebContents) => policeContents(contents, deny));
  app.on('window-all-closed', () => app.quit());
  app.on('before-quit', quitAfterStopping(app, stop, { info: (line) => log.info(line), error: (line) => log.error(line) }));
  for (const signal of QUIT_SIGNALS) process.once(signal, () => app.quit());

  app
    .whenReady()
    .then(async () => {
      window = await launch(undo);
    })
    .catch((err: unknown) => {
      // A failed launch (a refused runtime directory, say) is one line and exit 1, as in the CLI,
      // after whatever it had started is stopped.
      const message = err instanceof Error ? err.message : String(err);
      log.error(`launch failed: ${message}`);
      console.error('chatty-gateway:', message);
      void stop().finally(() => app.exit(1));
    });
}

function police(target: Session): void {
  policeSession(target, deny);
  target.protocol.handle(APP_SCHEME, async (request) => {
    const answer = await serveAppRequest({ url: request.url, method: request.method }, root);
    if (answer.status !== 200) log.warn(`app protocol: ${answer.status} ${request.url}`);
    const body = typeof answer.body === 'string' ? answer.body : Uint8Array.from(answer.body);
    return new Response(body, { status: answer.status, headers: answer.headers });
  });
}

async function launch(undo: (() => unknown)[]): Promise<BrowserWindow> {
  police(session.defaultSession);
  const report = (line: string): void => log.info(`plugins: ${line}`);
  const userData = app.getPath('userData');
  const { registry: modules } = await openAppModules(userPluginsDir(userData), process.env['CHATTY_MODULES_DIR'] || undefined, { report });
  undo.push(() => modules.close());

  const workspace = await detectWorkspace(agentWorkspaceDir({ env: process.env, isPackaged: app.isPackaged, cwd: process.cwd(), userData }));
  // The runtime directory's default fits a Unix socket address on every platform; one named in
  // CHATTY_RUNTIME_DIR that is too deep is refused at start, with nothing created.
  const gateway = new ProtocolGateway(modules, {
    broker: {
      root: { workspaceRoot: workspace.workspaceRoot, ...(workspace.kind === 'git' ? { baseBranch: workspace.baseBranch } : {}) },
      log: (line) => log.info(`broker: ${line}`),
    },
    onError: (err) => log.error('gateway: handler failed', err),
  }).withRuntimeDir(process.env['CHATTY_RUNTIME_DIR'] || access.defaultRuntimeDir());
  for (const agent of bundledAgents({ workspace })) gateway.withVirtualAgent(agent.name, agent.runner, agent.card);
  // Tasks cancelled, every child reaped, the socket and the token removed.
  undo.push(() => gateway.stop());
  const started = await gateway.start();
  log.info(`gateway on ${started.socketPath}; agents ${workspace.kind === 'git' ? `in worktrees of ${workspace.workspaceRoot} (${workspace.baseBranch})` : `in ${workspace.workspaceRoot}`}`);

  const window = openAppWindow(BrowserWindow, preloadPath);
  window.once('ready-to-show', () => window.show());
  const host = new BridgeHost(gateway, started, (url) => url === APP_PAGE_URL, { log: (line) => log.warn(line) });
  undo.push(() => host.close());
  const unbind = bindBridge(host, window.webContents);
  undo.push(unbind);
  await window.loadURL(APP_PAGE_URL);
  return window;
}

// The Electron shell: the composition root, and the only code that imports 'electron' (with
// electron-bridge.ts). It stays thin: every decision is in an Electron-free module beside it
// (window-options, security-policy, app-protocol, lifecycle, app-modules, app-gateway), tested in
// test/app; docs/security.md says why each is so.
import { app, BrowserWindow, protocol, session, type Session, type WebContents } from 'electron';
import electronLog from 'electron-log/node.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP_PAGE_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, serveAppRequest } from './app-protocol.js';
import { startAppGateway } from './app-gateway.js';
import { BridgeHost } from './bridge/bridge-host.js';
import { bindBridge } from './electron-bridge.js';
import { bringForward, QUIT_SIGNALS, quitAfterStopping, Teardown } from './lifecycle.js';
import { policeContents, policeSession } from './security-policy.js';
import { openAppWindow } from './window-options.js';

// The package root: three levels up from the build's out/main/app/main.js, two from the source
// (the tests run main.ts itself, on a stand-in for Electron).
const root = fileURLToPath(new URL(new URL(import.meta.url).pathname.endsWith('.ts') ? '../../' : '../../../', import.meta.url));
const preloadPath = join(root, 'out', 'preload', 'index.cjs');

// The main-process log: electron-log through its Node entry, which (unlike its Electron entry)
// opens no IPC channel for renderers to write to the log on. `<logs>/main.log`.
const log = electronLog.create({ logId: 'chatty-main' });
log.transports.file.resolvePathFn = () => join(app.getPath('logs'), 'main.log');
log.errorHandler.startCatching({ showDialog: false });
const quitLog = { info: (line: string) => log.info(line), error: (line: string, err?: unknown) => (err === undefined ? log.error(line) : log.error(line, err)) };
const deny = (line: string): void => log.warn(`security: ${line}`);

// One app at a time: a second launch brings the first one's window forward and ends.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // Before `ready`: the page's own origin (app://chatty), served from the package's allow-list.
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { ...APP_SCHEME_PRIVILEGES } }]);

  let window: BrowserWindow | undefined;
  const teardown = new Teardown(quitLog);

  app.on('second-instance', () => bringForward(window));
  // Every webContents that ever exists, the window's and any other, gets the denials.
  app.on('web-contents-created', (_event, contents: WebContents) => policeContents(contents, deny));
  app.on('window-all-closed', () => app.quit());
  // The first quit waits for the teardown (the gateway stopped, every child reaped), then goes on.
  app.on('before-quit', quitAfterStopping(app, () => teardown.run(), quitLog));
  for (const signal of QUIT_SIGNALS) process.once(signal, () => app.quit());

  app
    .whenReady()
    .then(async () => {
      window = await launch(teardown);
    })
    .catch((err: unknown) => {
      // A failed launch (a refused runtime directory, say) is one line and exit 1, as in the CLI,
      // once whatever it had started is stopped.
      const message = err instanceof Error ? err.message : String(err);
      log.error(`launch failed: ${message}`);
      console.error('chatty-gateway:', message);
      void teardown.run().finally(() => app.exit(1));
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

async function launch(teardown: Teardown): Promise<BrowserWindow> {
  police(session.defaultSession);
  const { gateway, started } = await startAppGateway(
    { userData: app.getPath('userData'), isPackaged: app.isPackaged, env: process.env, cwd: process.cwd(), log: quitLog },
    teardown,
  );
  const window = openAppWindow(BrowserWindow, preloadPath);
  window.once('ready-to-show', () => window.show());
  const host = new BridgeHost(gateway, started, (url) => url === APP_PAGE_URL, { log: (line) => log.warn(line) });
  teardown.add('close the bridge', () => host.close());
  teardown.add('unbind the bridge', bindBridge(host, window.webContents));
  await window.loadURL(APP_PAGE_URL);
  return window;
}

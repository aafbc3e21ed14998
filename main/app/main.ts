// The Electron shell: the composition root, and the only code of main/ that imports 'electron'.
// It stays thin, and uses the public pieces an embedding app uses (`./index.js`, the package's
// `chatty-protocol-gateway/electron`); every decision is in an Electron-free module beside it
// (window-options, security-policy, app-protocol, lifecycle, app-modules, app-gateway, app-menu),
// tested in test/app; docs/security.md says why each is so.
import { app, BrowserWindow, dialog, Menu, protocol, session, type Session, type WebContents } from 'electron';
import electronLog from 'electron-log/node.js';
import { join } from 'node:path';
import { APP_PAGE_URL } from './app-protocol.js';
import { startAppGateway } from './app-gateway.js';
import { bringForward, QUIT_SIGNALS, Teardown } from './lifecycle.js';
import {
  APP_SCHEME_REGISTRATION,
  appMenuTemplate,
  attachDesktopBridge,
  handleAppProtocol,
  policeContents,
  policeSession,
  preloadCopy,
  quitAfterStopping,
} from './index.js';
import { openAppWindow } from './window-options.js';

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
  protocol.registerSchemesAsPrivileged([APP_SCHEME_REGISTRATION]);

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
  handleAppProtocol(target, { log: (line) => log.warn(line) });
}

async function launch(teardown: Teardown): Promise<BrowserWindow> {
  police(session.defaultSession);
  // No Reload in the menu: a reload would deny, unseen, every approval waiting in the page.
  Menu.setApplicationMenu(Menu.buildFromTemplate(appMenuTemplate({ platform: process.platform, devTools: !app.isPackaged })));
  const { gateway, grants, grantsFile } = await startAppGateway(
    { userData: app.getPath('userData'), isPackaged: app.isPackaged, env: process.env, cwd: process.cwd(), log: quitLog },
    teardown,
  );
  // A copy of the preload, made now under userData: Electron reads it again at every load.
  const window = openAppWindow(BrowserWindow, preloadCopy(app.getPath('userData')));
  window.once('ready-to-show', () => window.show());
  // Refused for its preload (the copy changed by someone else), the page is told, but the script
  // that changed it may hide that: the person is told here too, where no page script reaches.
  const onRefused = (reason: string): void => void dialog.showMessageBox(window, { type: 'warning', message: 'This window no longer answers the agents', detail: reason });
  // Refused when the agents' workspace holds approvals.json or plugin-grants.json (CHATTY_WORKSPACE=$HOME).
  teardown.add('detach the bridge', attachDesktopBridge(gateway, window.webContents, { pageUrl: APP_PAGE_URL, log: (line) => log.warn(line), grants, trustFiles: [grantsFile], onRefused }));
  await window.loadURL(APP_PAGE_URL);
  return window;
}

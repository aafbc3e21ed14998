// The Electron shell: the composition root. Construct, wire, dispose in reverse order. This folder
// is the only code that imports 'electron'; everything it starts runs on plain Node too.
import { app, BrowserWindow, session } from 'electron';
import { fileURLToPath } from 'node:url';
import { openModules } from '../compose/modules.js';
import { access, ProtocolGateway } from '../gateway/index.js';
import { BridgeHost } from './bridge/bridge-host.js';
import { bindBridge } from './electron-bridge.js';

const root = new URL('../../../', import.meta.url);
const pageUrl = new URL('renderer-demo/index.html', root);
const preloadPath = fileURLToPath(new URL('out/preload/index.cjs', root));

async function launch(): Promise<void> {
  const { registry: modules } = await openModules(process.env.CHATTY_MODULES_DIR, { report: (line) => console.error(`chatty-gateway: ${line}`) });
  // The default is chosen so that the socket path fits a Unix socket address on every platform
  // (a deep home directory on macOS falls back to /tmp/chatty-run-<uid>); a directory named in
  // CHATTY_RUNTIME_DIR that is too deep is refused at start, with nothing created.
  const gateway = new ProtocolGateway(modules).withRuntimeDir(process.env.CHATTY_RUNTIME_DIR || access.defaultRuntimeDir());
  const started = await gateway.start().catch(async (err: unknown) => {
    await modules.close();
    throw err;
  });

  // The renderer reaches nothing on the network; deny every permission it might ask for.
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));

  const window = new BrowserWindow({
    width: 1000,
    height: 700,
    webPreferences: { preload: preloadPath, contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true },
  });
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event) => event.preventDefault());

  const host = new BridgeHost(gateway, started, (url) => url === pageUrl.href);
  const unbind = bindBridge(host, window.webContents);
  await window.loadURL(pageUrl.href);

  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    unbind();
    void gateway
      .stop()
      .then(() => modules.close())
      .finally(() => app.exit(0));
  });
}

app.on('window-all-closed', () => app.quit());
// A failed launch (a refused runtime directory, say) is one line and exit 1, as in the CLI.
app
  .whenReady()
  .then(launch)
  .catch((err: unknown) => {
    console.error('chatty-gateway:', err instanceof Error ? err.message : err);
    app.exit(1);
  });


// @ts-check
// A minimal Electron app embedding chatty-protocol-gateway: the gateway with the bundled agents,
// and this window's page as the human who answers their approvals (docs/embedding.md).
import { app, BrowserWindow, dialog, Menu, protocol, session } from 'electron';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundledAgents, detectWorkspace, openModules, ProtocolGateway } from 'chatty-protocol-gateway';
import {
  APP_SCHEME_REGISTRATION, DEFAULT_PAGE_URL, appMenuTemplate, attachDesktopBridge, handleAppProtocol,
  policeContents, policeSession, preloadCopy, quitAfterStopping, secureWebPreferences,
} from 'chatty-protocol-gateway/electron';

const env = process.env;
/** @type {() => Promise<void>} */
let stop = async () => {};

// Before ready: the page's own origin, app://chatty. Every webContents gets the denials.
protocol.registerSchemesAsPrivileged([APP_SCHEME_REGISTRATION]);
app.on('web-contents-created', (_event, contents) => policeContents(contents, console.warn));
app.on('window-all-closed', () => app.quit());
// The first quit waits for the gateway to stop: every task cancelled, every worker reaped.
app.on('before-quit', quitAfterStopping(app, () => stop(), console));

app.whenReady().then(async () => {
  policeSession(session.defaultSession, console.warn);
  // No Reload in the menu: a reload would deny, unseen, every approval waiting in the page.
  Menu.setApplicationMenu(Menu.buildFromTemplate(appMenuTemplate({ platform: process.platform, devTools: !app.isPackaged })));
  // This folder's index.html and page.js, and the package's renderer module, on app://chatty.
  handleAppProtocol(session.defaultSession, { pages: fileURLToPath(new URL('.', import.meta.url)) });

  // The plugins of CHATTY_MODULES_DIR (without it, the package's example plugins), and the
  // bundled agents working in CHATTY_WORKSPACE (in git worktrees in a repository), else in a folder
  // of their own: never this folder, whose page.js answers their approvals (attachDesktopBridge
  // refuses a workspace that holds or lies in the served pages).
  // What a plugin asks for (files, network…) is granted by the person, in the page, per component
  // digest, and remembered in <userData>/plugin-grants.json; without `grants` the registry would
  // give every plugin what its manifest declares, unasked.
  const grantsFile = join(app.getPath('userData'), 'plugin-grants.json');
  const { registry } = await openModules(env['CHATTY_MODULES_DIR'] || undefined, { report: console.warn, registry: { grants: { file: grantsFile } } });
  const workspace = await detectWorkspace(env['CHATTY_WORKSPACE'] || ownWorkspace());
  const root = { workspaceRoot: workspace.workspaceRoot, ...(workspace.kind === 'git' ? { baseBranch: workspace.baseBranch } : {}) };
  const gateway = new ProtocolGateway(registry, { runtimeDir: env['CHATTY_RUNTIME_DIR'] || undefined, broker: { root } });
  for (const agent of bundledAgents({ workspace })) gateway.withVirtualAgent(agent.name, agent.runner, agent.card);
  stop = async () => {
    await gateway.stop();
    await registry.close();
  };
  await gateway.start();

  // The preload copied under userData now (Electron reads it again at every load of the page).
  const window = new BrowserWindow({ width: 900, height: 640, webPreferences: secureWebPreferences(preloadCopy(app.getPath('userData'))) });
  // Refused for its preload (a copy under userData changed by someone else), the page is told, but
  // the script that changed it may hide that: the person is told here too, where it cannot reach.
  const onRefused = (/** @type {string} */ reason) => void dialog.showMessageBox(window, { type: 'warning', message: 'This window no longer answers the agents', detail: reason });
  // Refused if the agents' workspace holds the grants file (CHATTY_WORKSPACE=$HOME): one approved write would grant a plugin.
  attachDesktopBridge(gateway, window.webContents, { log: console.warn, grants: registry.grants, trustFiles: [grantsFile], onRefused });
  await window.loadURL(DEFAULT_PAGE_URL);
}).catch((err) => {
  console.error('chatty example:', err);
  void stop().finally(() => app.exit(1));
});

/** `<userData>/workspace`, created owner-only: the agents' folder when CHATTY_WORKSPACE is not set. */
function ownWorkspace() {
  const dir = join(app.getPath('userData'), 'workspace');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

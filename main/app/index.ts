/**
 * `chatty-protocol-gateway/electron`: what an Electron app's main process needs to put the
 * gateway's human in one of its windows, with the demo app's security posture. Nothing here
 * imports `electron` at run time (every Electron object is passed in), so it imports on plain
 * Node too; docs/embedding.md shows the whole wiring.
 */
export { attachDesktopBridge, DEFAULT_PAGE_URL, type BridgedWebContents, type BridgeInvokeEvent, type DesktopBridgeOptions } from './electron-bridge.js';
export {
  APP_ORIGIN,
  APP_SCHEME_REGISTRATION,
  appProtocolHandler,
  appSchemeRegistration,
  handleAppProtocol,
  preloadPath,
  type AppPagesOptions,
  type ProtocolSession,
} from './app-pages.js';
export { secureWebPreferences } from './secure-window.js';
export { preloadCopy } from './preload-copy.js';
export { policeContents, policeSession, type DenialLog, type PolicedContents, type PolicedSession } from './security-policy.js';
export { appMenuTemplate, type AppMenuOptions } from './app-menu.js';
export { quitAfterStopping, type QuitLog, type QuittingApp } from './lifecycle.js';
export { CONTENT_SECURITY_POLICY } from './window-options.js';

// @ts-check
// The page's one script (the CSP allows no inline script). The package's renderer module is
// served beside this page by the app: handler, at /out/renderer/index.js; its types are the
// package's `chatty-protocol-gateway/renderer`.
const rendererUrl = '/out/renderer/index.js';
const renderer = /** @type {typeof import('chatty-protocol-gateway/renderer')} */ (await import(rendererUrl));

// <chatty-approvals> shows each approval and question as a popover and answers it through
// window.chatty, the preload's bridge to the main process.
renderer.defineChattyApprovals();

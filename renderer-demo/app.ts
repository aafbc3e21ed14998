// The demo window. It sees only `window.chatty`, the preload's bridge; the page has no Node.
import type { ChattyBridge } from '../main/app/bridge/contract.js';

declare global {
  interface Window {
    chatty: ChattyBridge;
  }
}

const MAX_ROWS = 200;
const bridge = window.chatty;

function element<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (text !== undefined) el.textContent = text;
  return el;
}

async function showGateway(): Promise<void> {
  const where = document.getElementById('where');
  const list = document.getElementById('modules');
  if (!where || !list) return;
  const info = await bridge.gatewayInfo();
  where.textContent = `socket ${info.socketPath} · token ${info.tokenPath}`;
  list.replaceChildren(
    ...(info.modules.length === 0
      ? [element('li', 'no modules loaded')]
      : info.modules.map((m) => element('li', `${m.name} ${m.version} — ${m.surfaces.join(', ') || 'no surfaces'}`))),
  );
}

function followEdgeLog(): void {
  const body = document.querySelector('#edge tbody');
  if (!body) return;
  bridge.onEdgeRow((row) => {
    const tr = element('tr');
    if (row.reason !== undefined) tr.className = 'refused';
    for (const cell of [row.time.slice(11, 23), row.method, row.path, String(row.status), row.durationMs.toFixed(1), row.reason ?? '']) {
      tr.append(element('td', cell));
    }
    body.prepend(tr);
    while (body.children.length > MAX_ROWS) body.lastElementChild?.remove();
  });
}

followEdgeLog();
void showGateway();

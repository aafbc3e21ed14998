// A window closing ends its bridge for good: before, only its page was forgotten, and the host kept
// hearing the gateway (every edge row, every audit row, every plugin change, for which it listed
// every module's tools again) for the life of the process, one more host for each window an app
// opened and closed (a macOS app re-creating its window on `activate`, a tray's popup). A real
// gateway, a stand-in webContents; what the bridge subscribes to is counted where it subscribes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { gatewayWithWorkspace, windowAtPage } from './bridge-fixture.js';

/** A module directory with no modules that, as a registry does, takes change listeners. */
const modules = { list: () => [], onChange: (_listener: unknown) => () => {} };
let gw: RunningGateway;
before(async () => {
  gw = await gatewayWithWorkspace(modules);
});
after(() => gw.close());

/** Wraps `target[method]` (a subscribe function returning its unsubscribe) to count the subscriptions still live. */
function countLive<T extends object, K extends keyof T>(target: T, method: K): { live(): number } {
  const original = target[method] as (...args: unknown[]) => () => void;
  let live = 0;
  target[method] = ((...args: unknown[]) => {
    const off = original.apply(target, args);
    live += 1;
    let done = false;
    return () => {
      if (!done) {
        done = true;
        live -= 1;
      }
      off();
    };
  }) as T[K];
  return { live: () => live };
}

test("a closed window's bridge stops hearing the gateway (edge rows, decisions, plugin changes, messages), as a detached one does", () => {
  const edges = countLive(gw.gateway, 'onEdge');
  const decisions = countLive(gw.gateway.approvals, 'onDecision');
  const changes = countLive(modules, 'onChange');
  const counts = (): number[] => [edges.live(), decisions.live(), changes.live()];

  for (let i = 0; i < 3; i++) {
    const window = windowAtPage();
    attachDesktopBridge(gw.gateway, window);
    assert.deepEqual(counts(), [1, 1, 1], 'the attached bridge hears the gateway');
    window.destroy(); // the window closed; nobody calls the detach function (docs/embedding.md: no need)
    assert.deepEqual(counts(), [0, 0, 0], `window ${i + 1}: closed, its bridge hears nothing more`);
  }

  const window = windowAtPage();
  const detach = attachDesktopBridge(gw.gateway, window);
  detach();
  assert.deepEqual(counts(), [0, 0, 0], 'detached: the same');
});

test('re-attaching to a window that closed with its bridge never detached is refused as destroyed, not as one with a bridge', () => {
  const window = windowAtPage();
  attachDesktopBridge(gw.gateway, window);
  window.destroy(); // nobody calls the detach function
  assert.throws(() => attachDesktopBridge(gw.gateway, window), /the webContents is destroyed/);
});

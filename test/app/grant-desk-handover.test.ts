// The grant desk was handed back only among bridges of one gateway that were each given `grants`:
// with two gateways sharing one registry's desk (a gateway per window), or a first window attached
// without `grants`, a capability request waiting in a window that closed stayed with that window's
// host (its desk handler kept), shown nowhere, and so did every later one. Now a window destroyed
// drops its desk handler, and the desk goes back to the bridge with that desk attached before it
// whose window is still open, whatever its gateway; with none, the requests wait in the desk for
// the next bridge given it. A real gateway each, stand-in webContents.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import type { PendingGrant } from '../../main/app/bridge/contract.js';
import type { GrantDesk } from '../../main/app/bridge/bridge-host.js';
import { PluginGrants } from '../../main/plugins/grants/index.js';
import type { RunningGateway } from '../helpers/gateway.js';
import { grantRequest } from '../helpers/grant-request.js';
import { planGateway, windowAtPage } from './bridge-fixture.js';

let gw1: RunningGateway;
let gw2: RunningGateway;
before(async () => {
  [gw1, gw2] = await Promise.all([planGateway(), planGateway()]);
});
after(async () => {
  await Promise.all([gw1.close(), gw2.close()]);
});

/** The desk, and how many handlers it has set and not removed (the bridges holding it). */
function countingDesk(): { desk: PluginGrants; counted: GrantDesk; holders: () => number } {
  const desk = new PluginGrants();
  let holders = 0;
  const counted: GrantDesk = {
    onRequest(handler) {
      const off = desk.onRequest(handler);
      holders++;
      let removed = false;
      return () => {
        if (!removed) holders--;
        removed = true;
        off();
      };
    },
  };
  return { desk, counted, holders: () => holders };
}

test("two gateways sharing one desk: the second window closing hands its request, and later ones, to the first window's bridge", { timeout: 180_000 }, async () => {
  const desk = new PluginGrants();
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw1.gateway, first, { grants: desk });
  const detachSecond = attachDesktopBridge(gw2.gateway, second, { grants: desk });
  const waiting = desk.ask(grantRequest({ plugin: 'asked-before' }));
  await second.sentOn<PendingGrant>('chatty:grant', (g) => g.plugin === 'asked-before');
  second.destroy();
  const later = desk.ask(grantRequest({ plugin: 'asked-after' }));
  const [before, after] = await Promise.all(['asked-before', 'asked-after'].map((plugin) => first.sentOn<PendingGrant>('chatty:grant', (g) => g.plugin === plugin)));
  assert.ok(before && after);
  desk.withdrawAll();
  assert.deepEqual([await waiting, await later], ['withdrawn', 'withdrawn']);
  detachSecond();
  detachFirst();
});

test('a first window without grants: the second window closing drops its desk handler, and the requests wait in the desk for the next bridge given it', { timeout: 180_000 }, async () => {
  const { desk, counted, holders } = countingDesk();
  const first = windowAtPage();
  const second = windowAtPage();
  const detachFirst = attachDesktopBridge(gw1.gateway, first);
  const detachSecond = attachDesktopBridge(gw1.gateway, second, { grants: counted });
  const waiting = desk.ask(grantRequest({ plugin: 'asked-before' }));
  await second.sentOn<PendingGrant>('chatty:grant');
  assert.equal(holders(), 1);
  second.destroy();
  assert.equal(holders(), 0, "the closed window's host no longer holds the desk");
  const later = desk.ask(grantRequest({ plugin: 'asked-after' }));
  assert.deepEqual(desk.waiting().map((r) => r.plugin), ['asked-before', 'asked-after'], 'nothing lost');
  const third = windowAtPage();
  const detachThird = attachDesktopBridge(gw1.gateway, third, { grants: counted });
  await Promise.all(['asked-before', 'asked-after'].map((plugin) => third.sentOn<PendingGrant>('chatty:grant', (g) => g.plugin === plugin)));
  desk.withdrawAll();
  assert.deepEqual([await waiting, await later], ['withdrawn', 'withdrawn']);
  for (const detach of [detachThird, detachSecond, detachFirst]) detach();
});

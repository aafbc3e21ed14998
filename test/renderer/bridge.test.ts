import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { BRIDGE_CHANNELS } from '../../main/app/bridge/contract.js';
import { BridgeHost } from '../../main/app/bridge/bridge-host.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { installPreload, launchChromium, serveDemo } from '../helpers/renderer-page.js';

let browser: Browser;
let gw: RunningGateway;
let demo: { base: string; server: Server };
let host: BridgeHost;

before(async () => {
  gw = await startGateway({
    list: () => [{ name: 'text-tools', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false } }],
  });
  demo = await serveDemo({
    '/renderer-demo/framed.html': '<!doctype html><iframe src="/renderer-demo/inner.html"></iframe>',
    '/renderer-demo/inner.html': '<!doctype html><p>inner</p>',
  });
  host = new BridgeHost(gw.gateway, { socketPath: gw.socketPath, tokenPath: gw.tokenPath }, (url) => url === `${demo.base}/renderer-demo/index.html`);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  demo?.server.close();
  await gw?.close();
});

describe('renderer bridge (real preload and demo page in Chromium, IPC looped back)', () => {
  test('the demo window shows the gateway and follows the edge log live', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const { emit } = await installPreload(page, host);
    const stop = host.forwardEdgeRows((channel, payload) => void emit(channel, payload));
    try {
      await page.goto(`${demo.base}/renderer-demo/index.html`);
      await page.waitForFunction(() => document.getElementById('where')?.textContent?.startsWith('socket '));
      assert.equal(await page.textContent('#where'), `socket ${gw.socketPath} · token ${gw.tokenPath}`);
      assert.equal(await page.textContent('#modules li'), 'text-tools 1.0.0 — /mcp/text-tools, /mcp/text-tools/sse');

      await unixRequest(gw.socketPath, { path: '/', headers: gw.auth });
      await unixRequest(gw.socketPath, { path: '/', headers: { host: 'evil.example' } });
      await page.waitForFunction(() => document.querySelectorAll('#edge tbody tr').length === 2);
      const rows = await page.$$eval('#edge tbody tr', (trs) => trs.map((tr) => ({ cls: tr.className, cells: [...tr.children].map((td) => td.textContent) })));
      // Newest first: the refusal, then the served request.
      assert.deepEqual(rows.map((r) => [r.cls, r.cells[1], r.cells[2], r.cells[3], r.cells[5]]), [
        ['refused', 'GET', '/', '403', 'host not loopback: evil.example'],
        ['', 'GET', '/', '200', ''],
      ]);
      assert.deepEqual(errors, []);
    } finally {
      stop();
      await page.close();
    }
  });

  test('the page has no Node and a frozen, minimal bridge', async () => {
    const page = await browser.newPage();
    await installPreload(page, host);
    try {
      await page.goto(`${demo.base}/renderer-demo/index.html`);
      const shape = await page.evaluate(() => ({
        keys: Object.keys((window as unknown as { chatty: object }).chatty).sort(),
        frozen: Object.isFrozen((window as unknown as { chatty: object }).chatty),
        require: typeof (window as unknown as { require?: unknown }).require,
        process: typeof (window as unknown as { process?: unknown }).process,
      }));
      assert.deepEqual(shape, { keys: ['gatewayInfo', 'onEdgeRow'], frozen: true, require: 'undefined', process: 'undefined' });
    } finally {
      await page.close();
    }
  });

  test('a call from an iframe is refused by the main side', async () => {
    const page = await browser.newPage();
    await installPreload(page, host);
    try {
      await page.goto(`${demo.base}/renderer-demo/framed.html`);
      const inner = page.frames().find((f) => f.url().endsWith('/inner.html'));
      assert.ok(inner);
      const outcome = await inner.evaluate(() =>
        (window as unknown as { chatty: { gatewayInfo(): Promise<unknown> } }).chatty.gatewayInfo().then(
          () => 'answered',
          (err: Error) => err.message,
        ),
      );
      assert.match(outcome, /refused chatty:gateway-info: sender .*inner\.html is not the trusted window/);
    } finally {
      await page.close();
    }
  });

  test('the main side refuses another page, an unknown channel, and a payload where none is taken', async () => {
    const top = { url: `${demo.base}/renderer-demo/index.html`, isMainFrame: true };
    await assert.rejects(host.handle(BRIDGE_CHANNELS.gatewayInfo, { url: 'https://evil.example/', isMainFrame: true }, undefined), /not the trusted window/);
    await assert.rejects(host.handle('chatty:shell-exec', top, 'rm -rf /'), /unknown channel chatty:shell-exec/);
    await assert.rejects(host.handle(BRIDGE_CHANNELS.gatewayInfo, top, { sneaky: true }), /invalid payload/);
    const info = (await host.handle(BRIDGE_CHANNELS.gatewayInfo, top, undefined)) as { socketPath: string };
    assert.equal(info.socketPath, gw.socketPath);
  });
});

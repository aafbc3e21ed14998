import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ModuleHandle } from '../../main/plugins/index.js';
import { openSseSession, startMcpGateway, type McpGateway } from './helpers.js';

/**
 * A reload swaps a module's instance under an open legacy SSE session: cancelling still reaches
 * every call of the session, the one still running on the old instance (`notifications/cancelled`
 * sent after the swap) and one posted after it (the stream closing). The guest spins forever (the
 * loop fixture, 60 s limit), so only a cancel that arrives ends it in the test's time.
 */
let gw: McpGateway;
before(async () => {
  gw = await startMcpGateway(['spin']);
});
after(async () => {
  await gw.close();
});

const loopCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'loop', arguments: {} } });

async function running(handle: ModuleHandle, callId: string): Promise<void> {
  while (handle.runningCallId !== callId) await new Promise((resolve) => setImmediate(resolve));
}

/** How many running calls the registry has said were stopped. */
const stoppedCount = (): number => gw.logs.filter((l) => /was cancelled while it ran/.test(l.message)).length;

/** Resolves once the registry has said `count` running calls were stopped. */
async function stopped(count: number): Promise<void> {
  while (stoppedCount() < count) await new Promise((resolve) => setImmediate(resolve));
}

const openSession = () => openSseSession(gw, 'spin');

describe('cancelling across a reload (legacy SSE)', { timeout: 180_000 }, () => {
  test('notifications/cancelled sent after the swap stops the call still running on the old instance', async () => {
    const { stream, post } = await openSession();
    try {
      const old = gw.registry.get('spin')!;
      assert.equal(await post(loopCall(1)), 202);
      await running(old, '1');
      await gw.registry.reload('spin');
      assert.notEqual(gw.registry.get('spin'), old);
      const stops = stoppedCount();
      assert.equal(await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }), 202);
      await stopped(stops + 1);
    } finally {
      stream.response.destroy();
    }
  });

  test('the stream closing stops a call posted on it after a reload', async () => {
    const { stream, post } = await openSession();
    await gw.registry.reload('spin');
    const fresh = gw.registry.get('spin')!;
    const stops = stoppedCount();
    assert.equal(await post(loopCall(2)), 202);
    await running(fresh, '2');
    stream.response.destroy();
    await stopped(stops + 1);
  });
});

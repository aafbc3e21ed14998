import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { EdgeRow } from '../../main/gateway/index.js';
import { MAX_REQUESTS_IN_FLIGHT } from '../../main/gateway/mcp/request-cap.js';
import { connectClient, startMcpGateway, type McpGateway } from './helpers.js';

/**
 * A legacy SSE POST is answered 202 at once, so a client could queue calls without limit. The
 * official SDK client floods one session while its module is held by a spinning call: the calls
 * over the cap are refused at once with a JSON-RPC error on the stream, and nothing else is lost.
 */
let gw: McpGateway;
const rows: EdgeRow[] = [];
before(async () => {
  gw = await startMcpGateway(['spin']);
  gw.gateway.onEdge((row) => rows.push(row));
});
after(async () => {
  await gw.close();
});

const echoResult = (n: number) => ({ content: [{ type: 'text', text: JSON.stringify({ n }) }] });

test(`an SSE session's requests over ${MAX_REQUESTS_IN_FLIGHT} in flight are refused at once; those admitted all complete`, { timeout: 180_000 }, async () => {
  const { client, close } = await connectClient(gw, 'spin', 'sse');
  try {
    // The module is held: the loop spins until cancelled, so everything behind it stays in flight.
    const stop = new AbortController();
    const spinning = client.callTool({ name: 'loop', arguments: {} }, undefined, { signal: stop.signal, timeout: 60_000 }).catch((err: unknown) => err);
    while (gw.registry.get('spin')!.runningCallId === undefined) await new Promise((resolve) => setImmediate(resolve));
    const admitted = Array.from({ length: MAX_REQUESTS_IN_FLIGHT - 1 }, (_, n) => client.callTool({ name: 'echo', arguments: { n } }, undefined, { timeout: 60_000 }));
    while (gw.metered.length < MAX_REQUESTS_IN_FLIGHT) await new Promise((resolve) => setImmediate(resolve));

    const over = await Promise.allSettled(Array.from({ length: 10 }, (_, n) => client.callTool({ name: 'echo', arguments: { n } }, undefined, { timeout: 5_000 })));
    for (const refused of over) {
      assert.equal(refused.status, 'rejected');
      const err = (refused as PromiseRejectedResult).reason as unknown;
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, -32000);
      assert.match(err.message, new RegExp(`too many requests in flight on this SSE session: at most ${MAX_REQUESTS_IN_FLIGHT}`));
    }
    assert.equal(gw.metered.length, MAX_REQUESTS_IN_FLIGHT, 'no refused call reached the module');
    assert.ok(rows.some((r) => r.status === 202 && /too many requests in flight/.test(r.reason ?? '')), 'the edge log says why');

    // A notification is never refused: the cancellation goes through at the cap and frees the module.
    stop.abort();
    await spinning;
    const answers = await Promise.all(admitted);
    answers.forEach((answer, n) => assert.deepEqual(answer, echoResult(n)));
    assert.deepEqual(await client.callTool({ name: 'echo', arguments: { n: 99 } }), echoResult(99), 'the session takes calls again');
  } finally {
    await close();
  }
});

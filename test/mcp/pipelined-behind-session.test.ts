/**
 * Requests pipelined behind a legacy SSE session's stream on its own connection: the stream ends
 * only when the connection closes, so their answers can never be delivered. Before, they ran and
 * their answers were held (1 MiB each here, up to the 64 MiB ledger) for as long as the client
 * read its stream, outside the write deadline (it asks only the socket's own bytes, and the
 * stream's keep-alives were read). Now a request read behind the stream is never run, and an
 * answer to one read before the stream opened is never held: either way the connection is closed.
 */
import assert from 'node:assert/strict';
import { createConnection } from 'node:net';
import { after, before, test } from 'node:test';
import type { CallableModule, EdgeRow, ModuleToolOutcome } from '../../main/gateway/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { RawConnection } from '../helpers/http.js';

let calls = 0;
/** Calls to the tool `wait` running now, each answered when the test says. */
const waiting: ((outcome: ModuleToolOutcome) => void)[] = [];
const big: CallableModule = {
  name: 'big', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false },
  listTools: async () => [],
  invokeTool: async (request) => {
    calls++;
    if (request.name === 'wait') return new Promise((resolve) => waiting.push(resolve));
    return { ok: true, value: { content: 'x'.repeat(1024 * 1024) } };
  },
};
let gw: RunningGateway;
const rows: EdgeRow[] = [];
before(async () => {
  gw = await startGateway({ list: () => [big], get: (name) => (name === 'big' ? big : undefined) }, { connectionLimits: { answerDrainWindowMs: 500 } });
  gw.gateway.onEdge((row) => rows.push(row));
});
after(() => gw.close());

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
};

test('calls pipelined behind a legacy SSE stream on its connection are never answered nor held: the connection is closed', { timeout: 180_000 }, async () => {
  const socket = createConnection(gw.socketPath);
  socket.on('error', () => {});
  socket.resume(); // reads all it is sent: the stream
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  const auth = gw.auth.authorization;
  let text = `GET /mcp/big/sse HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\nAccept: text/event-stream\r\n\r\n`;
  for (let id = 1; id <= 4; id++) {
    const call = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'mib', arguments: {} } });
    text += `POST /mcp/big HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`;
  }
  socket.write(text);
  try {
    // 30 write-deadline windows: before, the connection stayed open holding 4 MiB it could never send.
    const bound = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000).unref());
    assert.equal(await Promise.race([closed, bound]), true, `the connection is still open; the gateway holds ${gw.gateway.unsentBytes} bytes`);
    assert.equal(gw.gateway.unsentBytes, 0);
    // A request read after the stream opened is never run (one read before it may have run: its
    // answer was never held): the first is refused and its connection closed, and those Node read
    // behind it run nothing, with no row of their own.
    const refused = rows.filter((row) => row.method === 'POST' && row.reason?.includes('pipelined behind an SSE stream'));
    assert.ok(calls + refused.length >= 1 && refused.length <= 1, `${calls} calls ran, ${refused.length} refused`);
  } finally {
    socket.destroy();
  }
});

test('an SSE stream asked behind a call still running on its connection is refused, and the requests behind it are answered', { timeout: 180_000 }, async () => {
  const auth = gw.auth.authorization;
  const post = (id: number, tool: string): string => {
    const call = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: {} } });
    return `POST /mcp/big HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`;
  };
  const conn = await RawConnection.open(gw.socketPath);
  conn.socket.on('error', () => {});
  const ran = calls;
  try {
    // The stream is asked while the call ahead of it runs: it would be opened on a response
    // queued behind that call, where the rule above (asked of the response on the socket) never
    // sees it, and the two calls behind it would run with answers that can never be sent.
    await conn.write(post(1, 'wait') + `GET /mcp/big/sse HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\nAccept: text/event-stream\r\n\r\n` + post(2, 'mib') + post(3, 'mib'));
    await until(() => waiting.length === 1 && calls === ran + 3);
    waiting.shift()!({ ok: true, value: { content: 'first' } });
    assert.equal((await conn.readResponse()).status, 200);
    const stream = await conn.readResponse();
    // Before: 200 text/event-stream, a session open for as long as the client read it, and the
    // two 1 MiB answers behind it held unsendable (the write deadline asks the socket's bytes only).
    assert.equal(stream.status, 400, `the SSE stream was opened behind the call (${gw.gateway.openSseSessions} session open, ${gw.gateway.unsentBytes} bytes held)`);
    assert.match(stream.body, /pipelined behind another/);
    for (const id of [2, 3]) {
      const answer = await conn.readResponse();
      assert.equal(answer.status, 200);
      assert.equal((JSON.parse(answer.body) as { id: number }).id, id);
    }
    assert.equal(gw.gateway.openSseSessions, 0);
    await until(() => gw.gateway.unsentBytes === 0);
  } finally {
    for (const answer of waiting.splice(0)) answer({ ok: true, value: { content: '' } });
    conn.close();
  }
});

/**
 * The runner's answers the gateway holds while it reads them: a JSON answer is read whole (up to
 * 32 MiB) to check it is JSON-RPC, and an event up to 32 MiB until it is whole, so a runner that
 * stalls partway held that much on each forward, for its idle timeout (5 min), and the client
 * picks how many forwards run (512 connections: 16 GiB). They now count with the request bodies
 * being read (`MAX_READING_BODY_BYTES`, all together): past it the one whose sender has gone
 * longest without a byte is let go.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { MAX_READING_BODY_BYTES } from '../../main/gateway/index.js';
import { fakeUpstream, startA2aGateway, type A2aGateway } from './helpers.js';

const SEND = { jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: { role: 'user', parts: [], messageId: 'm' } } };
/** A third of the cap and then some: three such answers held at once pass it. */
const PART = Math.floor(MAX_READING_BODY_BYTES / 3) + 1024 * 1024;

let gw: A2aGateway;
let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
/** What the runner does with each request, in turn. */
const replies: ((res: ServerResponse) => void)[] = [];
const stalled: ServerResponse[] = [];

before(async () => {
  upstream = await fakeUpstream((req, res) => {
    req.resume();
    replies.shift()!(res);
  });
  gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url } } });
});
after(async () => {
  await gw.close();
  await upstream.close();
});

/** Sends one request and resolves once the runner has handed `head` and `PART` bytes to the kernel, then stalls. */
function stallAfter(head: string, contentType: string, accept: string): { answer: ReturnType<A2aGateway['request']>; sent: Promise<void> } {
  let sent!: () => void;
  const written = new Promise<void>((resolve) => (sent = resolve));
  replies.push((res) => {
    stalled.push(res);
    res.writeHead(200, { 'content-type': contentType });
    res.write(head);
    res.write(Buffer.alloc(PART, 0x61), () => sent());
  });
  return { answer: gw.request('POST', '/a2a/echo', SEND, { accept }), sent: written };
}

test('runner answers stalled partway are let go, the stalest first, when together they pass the cap; the others are relayed whole', { timeout: 180_000 }, async () => {
  const json = '{"jsonrpc":"2.0","id":7,"result":"';
  const first = stallAfter(json, 'application/json', 'application/json');
  await first.sent;
  const second = stallAfter(json, 'application/json', 'application/json');
  await second.sent;
  // An event stream's event not yet whole counts the same.
  const third = stallAfter(`data: ${json}`, 'text/event-stream', 'text/event-stream');
  await third.sent;

  const refused = await first.answer;
  assert.equal(refused.status, 502);
  assert.match(JSON.parse(refused.body).error.message, /let go: the gateway holds .* of bodies being read/);
  assert.ok(gw.gateway.readingBodyBytes <= MAX_READING_BODY_BYTES, `${gw.gateway.readingBodyBytes} bytes held`);

  // The others go on: finished, each is relayed whole.
  stalled[1]!.end('"}');
  stalled[2]!.end('"}\n\n');
  const [json2, stream3] = await Promise.all([second.answer, third.answer]);
  assert.equal(json2.status, 200);
  assert.equal(JSON.parse(json2.body).result.length, PART);
  assert.equal(stream3.status, 200);
  assert.ok(stream3.body.startsWith('data: {"jsonrpc"') && stream3.body.endsWith('"}\n\n'), stream3.body.slice(-200));
  // The requests' own bodies count until their responses close, which may come just after the client read them.
  while (gw.gateway.readingBodyBytes > 0) await new Promise((r) => setImmediate(r));
});

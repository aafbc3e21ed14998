/**
 * Two Host headers: Node keeps the first, and the gateway served a request whose second Host was
 * foreign (RFC 9112 §3.2: a server MUST answer 400 to more than one Host). It matters behind an
 * embedder's proxy that reads the last one. Now refused 400 before the token is looked at.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sendHead } from './raw-head.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';

let gw: RunningGateway;
before(async () => {
  gw = await startGateway();
});
after(() => gw.close());

const send = (head: string) => sendHead(gw, head);

test('two Host headers, loopback then foreign, or both loopback: 400 with a clear error', async () => {
  for (const hosts of [['localhost', 'evil.example'], ['localhost', 'localhost'], ['evil.example', 'localhost']]) {
    const res = await send(`GET / HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}`);
    assert.equal(res.status, 400, hosts.join(' then '));
    assert.deepEqual(JSON.parse(res.body), { error: 'bad request: more than one Host header' });
  }
});

test('one Host, in any case of its name, is served as before', async () => {
  assert.equal((await send('GET / HTTP/1.1\r\nhOsT: localhost\r\n')).status, 200);
  assert.equal((await send('GET / HTTP/1.1\r\nHost: localhost\r\nX-Host: evil.example\r\n')).status, 200);
});

/**
 * An absolute-form request target (`GET http://evil.example/ HTTP/1.1`) was served whatever its
 * authority, with a loopback Host or none: RFC 9112 §3.2.2 says the target's authority replaces
 * Host, so a proxy in front that forwards it would have its loopback check skipped by another
 * spelling. Now the target's authority is checked as Host is: not loopback, 403.
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

test('an absolute-form target whose authority is not loopback is 403, with a loopback Host or none', async () => {
  for (const head of ['GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\n', 'GET http://evil.example/ HTTP/1.1\r\n', 'GET http://evil.example:80/ HTTP/1.1\r\nHost: 127.0.0.1\r\n']) {
    const res = await send(head);
    assert.equal(res.status, 403, head);
    assert.deepEqual(JSON.parse(res.body), { error: "forbidden: the request target's host is not a loopback name" });
  }
});

test('an absolute-form target on a loopback authority, and an origin-form one, are served', async () => {
  assert.equal((await send('GET http://localhost:8080/ HTTP/1.1\r\nHost: localhost\r\n')).status, 200);
  assert.equal((await send('GET http://127.0.0.1/ HTTP/1.1\r\n')).status, 200);
  assert.equal((await send('GET / HTTP/1.1\r\nHost: localhost\r\n')).status, 200);
});

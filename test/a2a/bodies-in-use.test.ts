/**
 * Request bodies a request still runs with, and runner answers, in the one ledger of bodies
 * (`ReadingBodies`). A body left the ledger once whole, but its request held it (and its parsed
 * copy) until answered: 12 forwards of ~10 MiB waiting on a runner that had read them held
 * +239 MiB while the ledger said 0. And the ledger let go the stalest body whatever it held, so a
 * burst of another client's stalled request bodies killed a runner's half-sent answer (502 to a
 * task the runner had run) to free its 35 bytes.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MAX_READING_BODY_BYTES, MAX_REQUEST_BYTES } from '../../main/gateway/index.js';
import { RawConnection } from '../helpers/http.js';
import { fakeUpstream, startA2aGateway, type A2aGateway } from './helpers.js';

describe('request bodies in use', () => {
  let gw: A2aGateway;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  const waiting: ServerResponse[] = [];
  let onWhole = (): void => {};

  before(async () => {
    upstream = await fakeUpstream((req, res) => {
      // The runner reads the task whole, then thinks: no answer yet.
      req.resume();
      req.on('end', () => {
        waiting.push(res);
        onWhole();
      });
    });
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url } } });
  });
  after(async () => {
    for (const res of waiting) res.destroy();
    await gw.close();
    await upstream.close();
  });

  it('count until their request is answered; when they fill the cap a new body is refused 503 and those in use are answered', { timeout: 180_000 }, async () => {
    const text = 'a'.repeat(MAX_REQUEST_BYTES - 4096);
    const json = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text }] } } }));
    const head = `POST /a2a/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n`;
    const conns: { conn: RawConnection; response: Promise<Awaited<ReturnType<RawConnection['readResponse']>>> }[] = [];
    // Forwards the runner has read whole and not answered, one after the other, until one is refused.
    let refused: Awaited<ReturnType<RawConnection['readResponse']>> | undefined;
    for (let i = 0; i < 12 && refused === undefined; i++) {
      const conn = await RawConnection.open(gw.socketPath);
      const whole = new Promise<'whole'>((resolve) => (onWhole = () => resolve('whole')));
      await conn.write(head);
      // A body refused partway closes its connection once refused: it is sent in pieces until answered.
      let answered = false;
      const response = conn.readResponse().finally(() => (answered = true));
      const writing = (async () => {
        for (let at = 0; at < json.length && !answered; at += 256 * 1024) await conn.write(json.subarray(at, at + 256 * 1024));
      })().catch(() => {});
      const outcome = await Promise.race([whole, response]);
      if (outcome === 'whole') {
        conns.push({ conn, response });
        // Held by its request while the runner thinks: counted, at least its bytes.
        assert.ok(gw.gateway.readingBodyBytes >= conns.length * json.length, `${gw.gateway.readingBodyBytes} bytes counted for ${conns.length} bodies in use`);
      } else {
        refused = outcome;
        await writing;
        conn.close();
      }
    }
    assert.ok(refused, `${conns.length} forwards of ${json.length} bytes were all held at once`);
    assert.equal(refused.status, 503, refused.body);
    assert.match(JSON.parse(refused.body).error, /request bodies being sent or held by requests still running/);
    assert.ok(conns.length >= 1);
    assert.ok(gw.gateway.readingBodyBytes <= MAX_READING_BODY_BYTES, `${gw.gateway.readingBodyBytes} bytes of bodies held`);
    // The bodies in use were not let go: each forward is answered by its runner.
    for (const res of waiting.splice(0)) res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { kind: 'message', role: 'agent', messageId: 'r', parts: [] } }));
    for (const { conn, response } of conns) {
      const answer = await response;
      assert.equal(answer.status, 200, answer.body);
      conn.close();
    }
    while (gw.gateway.readingBodyBytes > 0) await new Promise((r) => setImmediate(r));
  });
});

describe('runner answers among the bodies', () => {
  const SEND = { jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: { role: 'user', parts: [], messageId: 'm' } } };
  let gw: A2aGateway;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  let runnerAnswer: ServerResponse | undefined;
  let headSent = (): void => {};

  before(async () => {
    upstream = await fakeUpstream((req, res) => {
      req.resume();
      runnerAnswer = res;
      res.writeHead(200, { 'content-type': 'application/json' });
      // The runner has done the task and starts its answer; the rest follows later.
      res.write('{"jsonrpc":"2.0","id":7,"result":"', () => headSent());
    });
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url } } });
  });
  after(async () => {
    runnerAnswer?.destroy();
    await gw.close();
    await upstream.close();
  });

  it("another client's stalled request bodies never let go a runner's half-sent answer (a 502 to a task it ran)", { timeout: 180_000 }, async () => {
    const started = new Promise<void>((resolve) => (headSent = resolve));
    const answer = gw.request('POST', '/a2a/echo', SEND, { accept: 'application/json' });
    await started;
    const inUse = gw.gateway.readingBodyBytes;
    // The gateway holds the answer's first bytes in its ledger.
    while (gw.gateway.readingBodyBytes === inUse) await new Promise((r) => setImmediate(r));

    const almost = Buffer.alloc(MAX_REQUEST_BYTES - 1, 0x20);
    const count = Math.floor(MAX_READING_BODY_BYTES / almost.length) + 1;
    const head = `POST /mcp/nothing-here HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_REQUEST_BYTES}\r\n\r\n`;
    const conns: RawConnection[] = [];
    for (let i = 0; i < count; i++) {
      const conn = await RawConnection.open(gw.socketPath);
      conns.push(conn);
      await conn.write(head);
      await conn.write(almost);
    }
    // One of the stalled request bodies is refused 503 before the runner goes on.
    assert.equal((await conns[0]!.readResponse()).status, 503);
    runnerAnswer!.end('done"}');
    const res = await answer;
    for (const conn of conns) conn.close();
    assert.equal(res.status, 200, `the runner's answer to a task it ran was dropped: ${res.status} ${res.body.slice(0, 300)}`);
  });
});

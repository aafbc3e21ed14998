/**
 * A remote runner's answer nesting more than 1,000 levels (main/jsonrpc's nesting cap, the one
 * of both wires) is not JSON-RPC to the gateway and is never parsed: a JSON answer is a 502, a
 * stream event ends the stream with an `error` event, as for any answer that is not JSON-RPC.
 * Before, the gateway checked each answer with `JSON.parse`, which builds every level: 10 MiB of
 * `[` from the runner held the gateway's main thread (Electron's main process) ~4 s per answer,
 * and an event up to 32 MiB ~13 s, before its 502.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { fakeUpstream, startA2aGateway, type A2aGateway } from './helpers.js';

const DEEP = Buffer.alloc(10 * 1024 * 1024, '[');
/** A valid answer whose result nests `levels` arrays (the whole answer: one level more). */
const nested = (levels: number): string => `{"jsonrpc":"2.0","id":7,"result":${'['.repeat(levels)}1${']'.repeat(levels)}}`;
const send = (method: string): object => ({ jsonrpc: '2.0', id: 7, method, params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'hi' }] } } });

describe("a remote runner's answer nested too deeply", { timeout: 180_000 }, () => {
  let gw: A2aGateway;
  let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
  /** What the runner answers next: the body, as JSON or as one stream event. */
  let answer: { body: Buffer | string; stream: boolean } = { body: '', stream: false };
  before(async () => {
    upstream = await fakeUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        if (!answer.stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(answer.body);
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: ');
        res.write(answer.body);
        res.end('\n\n');
      });
    });
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: upstream.url } } });
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('a JSON answer of 10 MiB of [ is a 502 for little more CPU than a small answer; 1,000 levels are relayed', async () => {
    answer = { body: nested(999), stream: false };
    const ok = await gw.request('POST', '/a2a/echo', send('message/send'));
    assert.equal(ok.status, 200);
    assert.equal(ok.body, nested(999));

    answer = { body: '{"jsonrpc":"2.0","id":7,"result":1}', stream: false };
    const plain = await cpuDuring(() => gw.request('POST', '/a2a/echo', send('message/send')));
    answer = { body: DEEP, stream: false };
    const deep = await cpuDuring(() => gw.request('POST', '/a2a/echo', send('message/send')));
    assert.equal(deep.result.status, 502);
    assert.match(JSON.parse(deep.result.body).error.message, /answered HTTP 200 \(application\/json\) with no JSON-RPC response/);
    console.log(`# 10 MiB of [ answered: ${deep.cpuMs.toFixed(0)} ms of CPU, a small answer ${plain.cpuMs.toFixed(0)} ms`);
    // CPU of this process (gateway, client and runner), not wall-clock: far under the ~4 s it guards.
    assert.ok(deep.cpuMs - plain.cpuMs < 1_500, `the deep answer cost ${(deep.cpuMs - plain.cpuMs).toFixed(0)} ms of CPU more than a small one`);
  });

  it('a stream event of 10 MiB of [ ends the stream with an error event, for little more CPU than a small one', async () => {
    answer = { body: '{"jsonrpc":"2.0","id":7,"result":1}', stream: true };
    const plain = await cpuDuring(() => gw.request('POST', '/a2a/echo', send('message/stream')));
    assert.equal(plain.result.body, 'data: {"jsonrpc":"2.0","id":7,"result":1}\n\n');
    answer = { body: DEEP, stream: true };
    const deep = await cpuDuring(() => gw.request('POST', '/a2a/echo', send('message/stream')));
    assert.equal(deep.result.status, 200);
    assert.match(deep.result.body, /^event: error\ndata: .*the remote runner sent a stream event that is not a JSON-RPC response/);
    console.log(`# a 10 MiB event of [: ${deep.cpuMs.toFixed(0)} ms of CPU, a small event ${plain.cpuMs.toFixed(0)} ms`);
    assert.ok(deep.cpuMs - plain.cpuMs < 1_500, `the deep event cost ${(deep.cpuMs - plain.cpuMs).toFixed(0)} ms of CPU more than a small one`);
  });
});

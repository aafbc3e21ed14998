/**
 * An A2A POST body nesting more than 1,000 levels (main/jsonrpc's nesting cap, the one of both
 * wires) is refused before `JSON.parse` builds it: 400 -32600, never forwarded, whatever the name.
 * Before, the A2A route parsed every body whole: 10 MiB of `[` to any name cost the gateway's
 * process ~4.5 s of CPU (a 13 s stall under load) before its 404, and a deep request for a
 * forwarded module was parsed whole on its way to the runner.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TOO_DEEP_MESSAGE } from '../../main/jsonrpc/index.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { A2aRunner } from './runner.js';
import { rowsFor, startA2aGateway, type A2aGateway } from './helpers.js';

const refused = { jsonrpc: '2.0', id: null, error: { code: -32600, message: TOO_DEEP_MESSAGE } };
/** A message/send whose message's metadata nests `levels` arrays (the body: three levels more). */
const deepSend = (levels: number): string =>
  `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"metadata":${'['.repeat(levels)}1${']'.repeat(levels)}}}}`;

describe('an A2A body nested too deeply', { timeout: 180_000 }, () => {
  let gw: A2aGateway;
  let runner: A2aRunner;
  before(async () => {
    runner = await new A2aRunner().start();
    gw = await startA2aGateway({ remote: ['echo'], options: { remoteRunner: { url: runner.url } } });
  });
  after(async () => {
    await gw.close();
    await runner.close();
  });

  it('10 MiB of [ is refused 400 -32600 for little more CPU than a small request, to any name', async () => {
    const plain = await cpuDuring(() => gw.request('POST', '/a2a/nobody', '[1]'));
    const deep = await cpuDuring(() => gw.request('POST', '/a2a/nobody', '['.repeat(10 * 1024 * 1024 - 1)));
    assert.equal(deep.result.status, 400);
    assert.deepEqual(JSON.parse(deep.result.body), refused);
    assert.equal(rowsFor(gw.rows, '/a2a/nobody').at(-1)?.reason, TOO_DEEP_MESSAGE);
    const extraMs = deep.cpuMs - plain.cpuMs;
    console.log(`# 10 MiB of [: ${deep.cpuMs.toFixed(0)} ms of CPU, a small body ${plain.cpuMs.toFixed(0)} ms`);
    // CPU of this process (gateway and client), not wall-clock: 1.5 s is far under the ~4.5 s it guards.
    assert.ok(extraMs < 1_500, `the deep body cost ${extraMs.toFixed(0)} ms of CPU more than a small one`);
  });

  it('a forwarded module: 1,000 levels are forwarded; one more is refused and never reaches the runner', async () => {
    const seen = runner.nextRequest();
    const at = deepSend(997);
    void gw.request('POST', '/a2a/echo', at);
    assert.equal((await seen).body, at);
    const before = runner.requests.length;
    for (const levels of [998, 100_000]) {
      const res = await gw.request('POST', '/a2a/echo', deepSend(levels));
      assert.equal(res.status, 400, String(levels));
      assert.deepEqual(JSON.parse(res.body), refused, String(levels));
    }
    assert.equal(runner.requests.length, before, 'nothing more went to the runner');
  });
});

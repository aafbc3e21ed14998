import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PluginGrants, type PluginGrantRequest } from '../../main/plugins/grants/index.js';

const asked = (plugin = 'notes'): Omit<PluginGrantRequest, 'id'> => ({
  plugin,
  version: '1.0.0',
  digest: `sha256:${'ab'.repeat(32)}`,
  asks: [{ capability: 'file', detail: 'read files under ./data' }],
});

describe('the grant desk (PluginGrants)', () => {
  it('hands a request made before any handler to the next handler set, and resolves with its decision', async () => {
    const desk = new PluginGrants();
    const outcome = desk.ask(asked());
    assert.deepEqual(desk.waiting().map((r) => r.plugin), ['notes']);
    const seen: PluginGrantRequest[] = [];
    desk.onRequest((request) => {
      seen.push(request);
      return 'granted';
    });
    assert.equal(await outcome, 'granted');
    assert.equal(seen[0]?.id, 'grant-1');
    assert.deepEqual(seen[0]?.asks, [{ capability: 'file', detail: 'read files under ./data' }]);
    assert.deepEqual(desk.waiting(), []);
  });

  it('denies when the handler throws or rejects', async () => {
    const desk = new PluginGrants();
    desk.onRequest(() => {
      throw new Error('no');
    });
    assert.equal(await desk.ask(asked()), 'denied');
    desk.onRequest(() => Promise.reject(new Error('no')));
    assert.equal(await desk.ask(asked()), 'denied');
  });

  it('aborts the handler\'s signal and resolves withdrawn when the request is withdrawn', async () => {
    const desk = new PluginGrants();
    let signal: AbortSignal | undefined;
    desk.onRequest((_request, s) => {
      signal = s;
      return new Promise(() => {}); // a person who never answers
    });
    const withdraw = new AbortController();
    const outcome = desk.ask(asked(), withdraw.signal);
    withdraw.abort();
    assert.equal(await outcome, 'withdrawn');
    assert.equal(signal?.aborted, true);
    assert.deepEqual(desk.waiting(), []);
  });

  it('hands what a removed handler had not answered to the next one; the late answer of the old one is ignored', async () => {
    const desk = new PluginGrants();
    let late: ((d: 'granted') => void) | undefined;
    let oldSignal: AbortSignal | undefined;
    const remove = desk.onRequest((_r, s) => {
      oldSignal = s;
      return new Promise((resolve) => (late = resolve));
    });
    const outcome = desk.ask(asked());
    await Promise.resolve();
    remove();
    assert.equal(oldSignal?.aborted, true);
    late?.('granted');
    assert.equal(desk.waiting().length, 1, 'still waiting: the removed handler no longer decides');
    desk.onRequest(() => 'denied');
    assert.equal(await outcome, 'denied');
  });

  it('a handler cannot change the request the registry decides on', async () => {
    const desk = new PluginGrants();
    desk.onRequest((request) => {
      request.asks.push({ capability: 'network', detail: 'anywhere' });
      return 'denied';
    });
    const outcome = desk.ask(asked());
    const before = desk.waiting();
    assert.deepEqual(before[0]?.asks.map((a) => a.capability), ['file']);
    await outcome;
  });
});

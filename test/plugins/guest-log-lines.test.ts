/**
 * A plugin's log lines reach a person's terminal (`serve` prints them on stderr, the registry's
 * default logger writes them there too). A guest logging a line break followed by text shaped
 * like the gateway's own lines (`chatty-gateway: module notes: granted …`) forged a line the
 * gateway never said; an escape sequence, a carriage return or a bidi control moved the cursor,
 * erased a row or reordered what a line reads, for a logger that writes as it is given. Now a
 * guest's line (`logging.log`, stdout, stderr) is one line of visible text when it leaves its
 * worker: each line break is `\n`, each other control or bidi control its `\u` escape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

describe("a guest's log line", () => {
  let fx: LoadedFixtures;
  before(async () => {
    fx = await loadFixtures([{ name: 'talker', kind: 'wasi' }]);
  });
  after(() => fx.close());

  const guestLines = (): string[] => fx.logs.filter((l) => l.fields?.['source'] !== 'host' && l.fields?.['module'] === 'talker').map((l) => l.message);

  it('is one line: a line break cannot start a line the gateway did not say', async () => {
    const forged = 'done\nchatty-gateway: module notes: granted file (read files under ./) for component sha256:0\r\n\u2028x';
    const before = guestLines().length;
    const handle = fx.registry.get('talker')!;
    assert.equal((await handle.invokeTool({ name: 'log', argumentsJson: forged, callId: 'l1' })).ok, true);
    const logged = guestLines().slice(before);
    assert.deepEqual(logged, ['done\\nchatty-gateway: module notes: granted file (read files under ./) for component sha256:0\\r\\n\\u2028x']);
  });

  it('carries no escape sequence, control or bidi control, from logging.log or stderr', async () => {
    const before = guestLines().length;
    const handle = fx.registry.get('talker')!;
    assert.equal((await handle.invokeTool({ name: 'log', argumentsJson: 'a\x1b[2Kb\x07c\u009bd\u202ee\tf', callId: 'l2' })).ok, true);
    assert.equal((await handle.invokeTool({ name: 'stdout', argumentsJson: 'out\x1b]0;title\x07\rline', callId: 'l3' })).ok, true);
    assert.deepEqual(guestLines().slice(before), ['a\\u001b[2Kb\\u0007c\\u009bd\\u202ee\tf', 'out\\u001b]0;title\\u0007\\rline']);
  });
});

/**
 * An ask the broker puts to a person can be answered with the options it offers: picked, the options
 * are held to the answers' own limits (`checkRelayedAnswers`: 256 KiB an ask as the asker's wire
 * carries them), so an ask whose options could not be is refused at the wire, the asker told why,
 * before a person picks them and is told to answer more briefly. Real children on real socketpairs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plan, startBroker } from './helpers.js';

test("an ask whose offered options, picked, would be over the answers' limit is refused at the ask; one whose options fit is answered with them", { timeout: 180_000 }, async () => {
  const t = startBroker(['asker']);
  let asked = 0;
  const off = t.root.onQuestion((request) => {
    asked++;
    return request.questions.map((q) => ({ id: q.id, answer: q.options[0]!, custom: false }));
  });
  try {
    // 64 options of 1,024 control characters: 6 KiB each escaped, ~396 KB picked (before: accepted,
    // and the picks refused: 'the answers are 395767 bytes on the wire, more than 262144').
    const over = { ask: Array.from({ length: 64 }, (_, k) => ({ id: `q${k + 1}`, question: 'Which?', options: ['\u0001'.repeat(1024)] })) };
    const refused = await t.root.invoke('asker', plan(over));
    assert.equal(refused.success, false);
    assert.match(`${refused.response} ${refused.error}`, /the options, picked, would be \d+ bytes on the wire as answers, more than 262144: offer shorter options/);
    assert.equal(asked, 0, 'the person was never asked');

    // The same with 1,024 three-byte characters: ~197 KB picked, within the limit.
    const fits = { ask: Array.from({ length: 64 }, (_, k) => ({ id: `q${k + 1}`, question: 'Which?', options: ['\u20ac'.repeat(1024)] })) };
    const answered = await t.root.invoke('asker', plan(fits));
    assert.equal(answered.success, true, `${answered.response} ${answered.error}`);
    assert.equal(asked, 1);
  } finally {
    off();
    await t.close();
  }
});

/**
 * A relayed `req.progress` against the caller's frame cap. Its envelope is 6 bytes shorter than
 * the callee's `task.event`, but the call id in it is the caller's own choice: one call under a
 * 16-digit id made a callee's event at the cap into a line over the caller's cap. Real children
 * (children/cap-callee.ts, children/big-id-caller.ts) on real socketpairs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startBroker, until } from './helpers.js';

const CALLEE = fileURLToPath(new URL('./children/cap-callee.ts', import.meta.url));
const CALLER = fileURLToPath(new URL('./children/big-id-caller.ts', import.meta.url));
const CAP = 64 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'chatty-progress-cap-'));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const id of ['2', '9007199254740991']) {
  test(`a callee's event at the frame cap, relayed to a call under id ${id}: every line within the caller's cap, and the whole text comes`, async () => {
    const t = startBroker([], { serve: { maxFrameBytes: CAP, workerMaxFrameBytes: CAP } });
    try {
      await t.broker.openParticipant('cap', process.execPath, ['--import', 'tsx', CALLEE, String(CAP)]);
      const report = join(dir, `caller-${id}.json`);
      const env = { ...process.env, CHATTY_TEST_INVOKE: JSON.stringify({ agent: 'cap-0', prompt: 'go' }) };
      await t.broker.openParticipant('caller', process.execPath, ['--import', 'tsx', CALLER, id, report], { env });
      await until(() => existsSync(report), "the caller's answer");
      const { longest, text, answer } = JSON.parse(readFileSync(report, 'utf8')) as { longest: number; text: number; answer: string };
      // Answered (here with `fitReply`'s error: the answer carries the whole text again, over this cap).
      assert.match(answer, new RegExp(`^\\{"v":3,"id":${id},`));
      assert.ok(longest <= CAP, `a line of ${longest} bytes was sent to a caller whose cap is ${CAP}`);
      const head = '{"v":3,"method":"task.event","params":{"id":1,"kind":"artifact","text":"';
      assert.equal(text, CAP - head.length - '"}}'.length, 'the progress text the caller got');
    } finally {
      await t.close();
    }
  });
}

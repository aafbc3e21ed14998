/**
 * The root's answers are held to what the asker's wire may carry (RootTransport.onQuestion,
 * `checkRelayedAnswers`: 16 K characters and 64 KiB each, 256 KiB an ask). Refused there, the asker
 * failed and the person at the terminal (`serve`'s prompt, which took any line) was told nothing.
 * Now the prompter holds each answer to the same rule as it is typed: it says why and asks again.
 * A real broker with the broker tests' agent, the terminal root over a piped input.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { attachTerminalRoot } from '../../main/cli/terminal-root/index.js';
import { plan, startBroker } from './helpers.js';

test("an answer typed at the terminal past what the asker's wire may carry is said to the person and asked again; the next answer is the one passed on", { timeout: 180_000 }, async () => {
  const t = startBroker(['asker']);
  const input = new PassThrough();
  const output = new PassThrough();
  let said = '';
  output.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const terminal = attachTerminalRoot(t.root, { approvals: 'prompt', input, output });
  // Too many characters, then too many bytes (16 K control characters: 96 KiB escaped), then a fitting answer.
  input.end(`${'x'.repeat(16 * 1024 + 1)}\n${'\u0001'.repeat(16 * 1024)}\nshort\n`);
  try {
    const result = await t.root.invoke('asker', plan({ ask: [{ id: 'q1', question: 'Which?' }] }));
    // Before: nothing said, and the asker failed with "the root's answer was refused: ...".
    assert.ok(said.includes('  that answer cannot be passed on (answer 1 is longer than 16384 characters): please answer more briefly\n'), said.slice(-400));
    assert.ok(said.includes('  that answer cannot be passed on (answer 1 is 98306 bytes on the wire, more than 65536): please answer more briefly\n'), said.slice(-400));
    assert.equal(result.success, true, `${result.error} / ${result.response.slice(0, 200)}`);
    assert.ok(result.response.includes('"answer":"short"'), result.response.slice(0, 200));
  } finally {
    terminal.close();
    await t.close();
  }
});

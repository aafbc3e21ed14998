import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TaskText } from '../../main/broker/task-text.js';

/**
 * What a task's kept text must be, written the plain way: the whole text kept, then cut. The head
 * is the longest run of whole characters from the start within half the cap (chunk by chunk: the
 * first chunk that does not fit ends it); the tail is the last bytes of the rest within the other
 * half, less the continuation bytes of a character the cut split.
 */
function model(chunks: readonly string[], maxBytes: number): { text: string; cut: number } {
  const headCap = Math.floor(maxBytes / 2);
  const tailCap = maxBytes - headCap;
  let head = Buffer.alloc(0);
  let full = false;
  const rest: Buffer[] = [];
  for (let chunk of chunks) {
    if (!full) {
      const room = Buffer.alloc(headCap - head.length);
      const { read, written } = new TextEncoder().encodeInto(chunk, room);
      head = Buffer.concat([head, room.subarray(0, written)]);
      if (read === chunk.length) continue;
      full = true;
      chunk = chunk.slice(read);
    }
    rest.push(Buffer.from(chunk, 'utf8'));
  }
  const all = Buffer.concat(rest);
  let from = Math.max(0, all.length - tailCap);
  while (from < all.length && (all[from]! & 0xc0) === 0x80) from++;
  const cut = from;
  const tail = all.subarray(from).toString('utf8');
  const text = cut === 0 ? head.toString('utf8') + tail : `${head.toString('utf8')}\n[… ${cut} bytes of this task's text cut here: the broker keeps at most ${maxBytes} bytes of it, its head and its tail …]\n${tail}`;
  return { text, cut };
}

const chunk = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }), // astral characters and lone surrogates too
  fc.constantFrom('é', '€', '😀', '\ud83d', '\ude00', 'a'),
);

describe('TaskText', () => {
  it('keeps what the plain model keeps, for any chunks, characters and caps', () => {
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 60 }), fc.integer({ min: 1, max: 64 }), (chunks, maxBytes) => {
        const kept = new TaskText(maxBytes);
        for (const c of chunks) kept.append(c);
        const want = model(chunks, maxBytes);
        assert.equal(kept.cut, want.cut);
        assert.equal(kept.toString(), want.text);
      }),
      { numRuns: 2000 },
    );
  });
});

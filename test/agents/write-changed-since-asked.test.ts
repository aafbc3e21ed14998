/**
 * A write replaces only the file its approval's diff stat was counted against. While the person
 * decides, the file may be replaced or edited (their own editor, another worker sharing a
 * `directory` workspace): the write approved as `+1 -1` then replaced 200 lines no one was shown.
 * Real broker, the real worker (the scripted agent); the test is the root, and changes the file
 * while it is asked.
 */
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startScripted } from './helpers.js';

const UNSEEN = Array.from({ length: 200 }, (_, i) => `a line the person was not shown ${i}`).join('\n') + '\n';

const changes: { what: string; before: string | undefined; asked: string; change: (file: string) => void; after: string | undefined }[] = [
  {
    what: 'replaced by another file',
    before: 'old\n',
    asked: '+1 -1',
    change: (file) => {
      writeFileSync(`${file}.new`, UNSEEN);
      renameSync(`${file}.new`, file);
    },
    after: UNSEEN,
  },
  { what: 'edited in place', before: 'old\n', asked: '+1 -1', change: (file) => appendFileSync(file, UNSEEN), after: `old\n${UNSEEN}` },
  { what: 'made where there was none', before: undefined, asked: '+1 -0', change: (file) => writeFileSync(file, UNSEEN), after: UNSEEN },
  { what: 'removed', before: 'old\n', asked: '+1 -1', change: (file) => unlinkSync(file), after: undefined },
];

for (const { what, before, asked, change, after } of changes) {
  test(`the file ${what} while the person decided is not replaced: the write is refused, nothing written`, { timeout: 120_000 }, async () => {
    // Before: the write replaced whatever was there once approved ('wrote notes.txt (+1 -1)').
    let dir = '';
    const fabric = startScripted(
      ['a'],
      {
        approve: () => {
          change(join(dir, 'notes.txt'));
          return 'approved';
        },
      },
      {
        seed: (seeded) => {
          dir = seeded;
          if (before !== undefined) writeFileSync(join(seeded, 'notes.txt'), before);
        },
      },
    );
    try {
      const result = await fabric.invoke('a', 'write notes.txt new');
      assert.deepEqual(
        fabric.approvals.map(({ command_or_path, diff_stat }) => ({ command_or_path, diff_stat })),
        [{ command_or_path: 'notes.txt', diff_stat: asked }],
      );
      assert.equal(result.success, false, result.response);
      assert.equal(
        result.error,
        'write refused: "notes.txt" was changed after the person was asked to approve this write (made, replaced, edited or removed since its diff stat was counted): nothing was written',
      );
      const file = join(dir, 'notes.txt');
      assert.equal(existsSync(file) ? readFileSync(file, 'utf8') : undefined, after);
    } finally {
      await fabric.close();
    }
  });
}

test('a file left as it was while the person decided is written (a change, then a new file)', { timeout: 120_000 }, async () => {
  let dir = '';
  const seed = (seeded: string): void => {
    dir = seeded;
    writeFileSync(join(seeded, 'notes.txt'), 'old\n');
  };
  const fabric = startScripted(['a'], { approve: () => 'approved' }, { seed });
  try {
    const result = await fabric.invoke('a', 'write notes.txt new\nwrite other.txt one\\ntwo');
    assert.equal(result.success, true, result.error);
    assert.equal(result.response, 'wrote notes.txt (+1 -1)\nwrote other.txt (+2 -0)\n');
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'new\n');
    assert.equal(readFileSync(join(dir, 'other.txt'), 'utf8'), 'one\ntwo\n');
  } finally {
    await fabric.close();
  }
});

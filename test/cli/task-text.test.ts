/** The one rule for `\n` in task text typed on one line (`run`'s prompt, a line at `serve`'s prompt). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeTaskText, encodeTaskText } from '../../main/shell/task-text.js';

describe('task text on one line', () => {
  test('\\n is a new line, \\\\ a backslash (so \\\\n is a backslash and n), any other backslash kept', () => {
    assert.equal(decodeTaskText('say a\\nsay b'), 'say a\nsay b');
    assert.equal(decodeTaskText('say a\\\\nb'), 'say a\\nb');
    assert.equal(decodeTaskText('say a\\\\\\nb'), 'say a\\\nb');
    assert.equal(decodeTaskText('exec printf "%s\\t" x'), 'exec printf "%s\\t" x');
    assert.equal(decodeTaskText('trailing \\'), 'trailing \\');
  });

  test('encodeTaskText shows a text on one line that decodes back to it', () => {
    for (const text of ['say a\nsay b', 'say a\\nb', 'a\\\nb', 'c:\\dir\\n', 'plain', '\\', '\n\n\\\\']) {
      const shown = encodeTaskText(text);
      assert.ok(!shown.includes('\n'), shown);
      assert.equal(decodeTaskText(shown), text);
    }
    assert.equal(encodeTaskText('say a\nsay b'), 'say a\\nsay b');
    assert.equal(encodeTaskText('say a\\nb'), 'say a\\\\nb');
  });
});

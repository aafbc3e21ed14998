/** The scripted agent's parts on their own: the language, the diff stat, the workspace path check. */
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { diffStat, parseLine, parseScript, resolveInWorkspace, unescapeText, WorkspaceRefusal } from '../../main/agents/scripted/index.js';
import { tempDir } from './helpers.js';

describe('the language', () => {
  test('each instruction of the language', () => {
    assert.deepEqual(parseScript('say hello world\nstep build\nexec npm test -- --watch=false\nwrite src/a.ts x = 1\\ny = 2\nask Which DB? | Postgres | SQLite\nask Ready?\ninvoke local-reviewer say a\\nsay b\nagents\npost root done now\nsleep 250\nfail out of coffee'), [
      { op: 'say', text: 'hello world' },
      { op: 'step', name: 'build' },
      { op: 'exec', command: 'npm test -- --watch=false' },
      { op: 'write', path: 'src/a.ts', text: 'x = 1\ny = 2' },
      { op: 'ask', question: 'Which DB?', options: ['Postgres', 'SQLite'] },
      { op: 'ask', question: 'Ready?', options: [] },
      { op: 'invoke', agent: 'local-reviewer', prompt: 'say a\nsay b' },
      { op: 'agents' },
      { op: 'post', to: 'root', text: 'done now' },
      { op: 'sleep', ms: 250 },
      { op: 'fail', reason: 'out of coffee' },
    ]);
  });

  test('anything else is echoed: unknown words, instructions missing their arguments, a sleep that is not a number', () => {
    for (const line of ['hello there', 'exec', 'invoke lonely', 'post root', 'sleep soon', 'sleep 99999999999', 'agents please', 'Say hi']) {
      assert.deepEqual(parseLine(line), { op: 'echo', line }, line);
    }
  });

  test('blank lines are skipped, \\r\\n line ends accepted, `say` alone is an empty line', () => {
    assert.deepEqual(parseScript('\n  \nsay a\r\nsay\n'), [
      { op: 'say', text: 'a' },
      { op: 'say', text: '' },
    ]);
  });

  test('unescaping: \\n a new line, \\\\ a backslash, other backslashes kept; one level at a time', () => {
    assert.equal(unescapeText('a\\nb'), 'a\nb');
    assert.equal(unescapeText('a\\\\nb'), 'a\\nb');
    assert.equal(unescapeText(unescapeText('a\\\\nb')), 'a\nb');
    assert.equal(unescapeText('C:\\tmp \\x'), 'C:\\tmp \\x');
  });
});

describe('diff stat', () => {
  test('lines added and removed, as a line diff counts them', () => {
    assert.equal(diffStat(undefined, 'a\nb\n'), '+2 -0');
    assert.equal(diffStat('a\nb\n', 'a\nb\n'), '+0 -0');
    assert.equal(diffStat('a\nb\nc\n', 'a\nB\nc\n'), '+1 -1');
    assert.equal(diffStat('a\nb\nc\n', 'a\nc\n'), '+0 -1');
    assert.equal(diffStat('a\nb\n', ''), '+0 -2');
    assert.equal(diffStat('x\na\ny\nb\n', 'a\nb\nz\n'), '+1 -2');
  });
});

describe('the workspace path check', () => {
  const outside = tempDir('chatty-path-outside-');
  const workspace = tempDir('chatty-path-ws-');
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'src', 'a.ts'), '');
  symlinkSync(outside, join(workspace, 'out'));
  symlinkSync(join(workspace, 'src'), join(workspace, 'src-link'));
  symlinkSync(join(outside, 'f'), join(workspace, 'dangling'));
  writeFileSync(join(outside, 'hook'), '#!/bin/sh\n');
  linkSync(join(outside, 'hook'), join(workspace, 'hard'));
  mkdirSync(`${workspace}-evil`);
  after(() => {
    for (const dir of [outside, workspace, `${workspace}-evil`]) rmSync(dir, { recursive: true, force: true });
  });

  test('inside: a file, a new file in new folders', async () => {
    assert.equal(await resolveInWorkspace(workspace, 'src/a.ts'), join(workspace, 'src', 'a.ts'));
    assert.equal(await resolveInWorkspace(workspace, './new/deeper/b.txt'), join(workspace, 'new', 'deeper', 'b.txt'));
  });

  const refused: [string, RegExp][] = [
    ['', /an empty path/],
    ['.', /names the workspace itself/],
    ['../x', /"\.\." segment/],
    ['src/../../x', /"\.\." segment/],
    [`../${workspace.split('/').pop()}-evil/x`, /"\.\." segment/],
    ['/etc/passwd', /is absolute/],
    ['out/x', /leads out of the workspace \(really /],
    ['dangling', /is a symlink/],
    ['hard', /^"hard" has 2 names \(hard links\): writing it would change the file under its other names too$/],
    // A folder that is a link, even one that stays inside: the file written would not be the one read.
    ['src-link/c.ts', /^"src-link\/c\.ts" goes through "src-link", a symbolic link \(to "src"\): write the path as it really is$/],
    ['dangling/x', /^"dangling\/x" goes through "dangling", a symbolic link to nothing$/],
    ['src', /is not a regular file/],
    ['a\0b', /NUL byte/],
    // Read another way than a person reads it: refused, so the path approved is the path written.
    ['.husky\\pre-commit', /contains a backslash/],
    ['src\\..\\..\\x', /contains a backslash/],
    ['src/', /ends with "\/": it names a folder/],
    ['new/', /ends with "\/": it names a folder/],
    ['src/.', /ends with "\.": it names a folder/],
  ];
  for (const [path, reason] of refused) {
    test(`refused: ${JSON.stringify(path)}`, async () => {
      await assert.rejects(resolveInWorkspace(workspace, path), (err: unknown) => err instanceof WorkspaceRefusal && reason.test(err.message));
    });
  }
});

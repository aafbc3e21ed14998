/**
 * A `$(`, `<(`, `>(` or backtick inside a quote opens nothing for bash. The command-line reader
 * once found them again in its own output with no notion of quotes, so a quoted `'$('` … `')'`
 * (or '`' … '`', or an escaped "\`") took every command between into one "nested line" that was
 * itself a single quoted word: bash ran `rm -rf ~`, the deny rules and danger tags saw nothing
 * (review finding A1). Each line is checked with real bash first (X a function).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { dangerTags } from '../../main/broker/approvals/danger.js';
import { deniedBy } from '../../main/broker/approvals/match.js';
import { simpleCommands } from '../../main/broker/approvals/shell-commands.js';

const LINES = [
  "echo '$(' ; X ; echo ')'",
  "echo '`' ; X ; echo '`'",
  "echo '<(' ; X ; echo ')'",
  "echo a'>(' ; X ; echo ')'",
  'echo "\\`" ; X ; echo "\\`"',
  "echo $'\\'$(' ; X ; echo ')'",
];

const bashRunsX = (line: string): boolean =>
  spawnSync('bash', ['-c', `X() { echo __X_RAN__; }\n${line}`], { encoding: 'utf8', input: '' }).stdout.includes('__X_RAN__');

for (const line of LINES) {
  test(`bash runs X in ${JSON.stringify(line)}: a deny rule on X covers it`, () => {
    assert.equal(bashRunsX(line), true);
    assert.notEqual(deniedBy({ prefix: 'X' }, { kind: 'exec', command_or_path: line, workspace: '/tmp' }), false);
  });
  const rm = line.replace('X', 'rm -rf ~');
  test(`${JSON.stringify(rm)} is tagged recursive-delete`, () => {
    assert.ok(dangerTags('exec', rm, '/tmp').includes('recursive-delete'));
  });
}

test('a quoted opener is a word of its command; a real substitution beside it is still read', () => {
  const commands = simpleCommands("echo '$(' \"\\`\" $(make deploy) ; rm x").map((c) => c.words.join(' '));
  assert.equal(commands[0]!.split(' ')[1], '$(');
  assert.deepEqual(commands.slice(1), ['rm x', 'make deploy']);
  // A substitution left open (the line is read flat too) still has its command read.
  assert.ok(simpleCommands('echo $(make deploy').some((c) => c.words.join(' ') === 'make deploy'));
  // In a heredoc's unquoted body a substitution runs, quotes or not: its command is read.
  assert.ok(simpleCommands("cat <<E\n'$(make deploy)'\nE").some((c) => c.words.join(' ') === 'make deploy'));
});

/** `serve --agent NAME=COMMAND`: the command's relative paths resolved against the directory serve started in. */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { resolveCommandPaths } from '../../main/cli/agent-command.js';
import { tempDir } from '../agents/helpers.js';

const dir = tempDir('chatty-agent-command-');
after(() => rmSync(dir, { recursive: true, force: true }));
for (const file of ['helper.js', 'config.json', 'node', 'out.log', 'my agent.js']) writeFileSync(join(dir, file), '');
mkdirSync(join(dir, 'bin'));
writeFileSync(join(dir, 'bin', 'agent.sh'), '');

const at = (command: string) => resolveCommandPaths(command, dir);

describe('resolveCommandPaths', () => {
  test('a relative path that exists in the directory becomes absolute: an argument, or a program with a /', () => {
    assert.equal(at('node helper.js'), `node ${dir}/helper.js`);
    assert.equal(at('node ./helper.js --config config.json'), `node ${dir}/helper.js --config ${dir}/config.json`);
    assert.equal(at('./bin/agent.sh'), `${dir}/bin/agent.sh`);
    assert.equal(at('cd /tmp && bin/agent.sh | cat'), `cd /tmp && ${dir}/bin/agent.sh | cat`);
    assert.equal(at('DEBUG=1 bin/agent.sh'), `DEBUG=1 ${dir}/bin/agent.sh`);
    assert.equal(at('node -r helper.js x'), `node -r ${dir}/helper.js x`);
    assert.equal(at('cd bin && exec node helper.js'), `cd bin && exec node ${dir}/helper.js`);
  });

  test('a path with a space is quoted as one shell word', () => {
    const spaced = tempDir('chatty agent command ');
    try {
      writeFileSync(join(spaced, 'helper.js'), '');
      assert.equal(resolveCommandPaths('node helper.js', spaced), `node '${spaced}/helper.js'`);
    } finally {
      rmSync(spaced, { recursive: true, force: true });
    }
  });

  test('anything else reaches the shell as typed', () => {
    for (const command of [
      'node missing.js', // not there: maybe the workspace has it
      'node', // a program without a /: looked up in PATH, even with a file of its name here
      'node /abs/helper.js',
      "node 'helper.js'",
      'node "$HOME/helper.js"',
      'node helper*.js',
      'node helper.js.bak',
      'node --require=helper.js x',
      'echo hi > out.log',
      'cat < out.log',
      'ls .',
      'ls ../..',
      'node x # helper.js',
      'node my\\ agent.js',
      'cd bin && exec node agent.sh', // cd: the worker works in its workspace, never in the user's checkout
      'pushd bin; node x',
    ]) {
      assert.equal(at(command), command, command);
    }
  });
});

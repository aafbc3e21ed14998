/**
 * `chatty-gateway approvals list|revoke` and `serve --approvals-file`: the "always" rules file as a
 * user reaches it from the command line, as real child processes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ApprovalRules } from '../../main/broker/index.js';
import { runCli } from '../helpers/cli.js';

function scratch(): { dir: string; env: NodeJS.ProcessEnv; defaultFile: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-approvals-cli-'));
  const config = join(dir, 'config');
  return { dir, env: { ...process.env, XDG_CONFIG_HOME: config }, defaultFile: join(config, 'chatty', 'approvals.json'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('chatty-gateway approvals', () => {
  it('list shows the rules of the default file ($XDG_CONFIG_HOME/chatty/approvals.json); revoke removes one; --json', async () => {
    const s = scratch();
    try {
      const empty = await runCli(['approvals', 'list'], { env: s.env });
      assert.equal(empty.code, 0, empty.stderr);
      assert.equal(empty.stdout, `no approval rules in ${s.defaultFile}\n`);
      const rules = new ApprovalRules();
      rules.persistTo(s.defaultFile);
      const kept = rules.add({ effect: 'allow', kind: 'exec', agent: 'local-coder', match: { prefix: 'npm test' } });
      const gone = rules.add({ effect: 'deny', kind: 'write', agent: '*', match: { glob: '.github/**' } });
      assert.equal(statSync(s.defaultFile).mode & 0o777, 0o600);
      const listed = await runCli(['approvals', 'list'], { env: s.env });
      assert.equal(listed.stdout, `${kept.id}  allow exec  local-coder      npm test *\n${gone.id}  deny  write *                .github/**\n`);
      const revoked = await runCli(['approvals', 'revoke', gone.id], { env: s.env });
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal(revoked.stdout, `revoked ${gone.id}\n`);
      const json = await runCli(['approvals', 'list', '--json', '--approvals-file', s.defaultFile], { env: process.env });
      assert.deepEqual(JSON.parse(json.stdout), { file: s.defaultFile, rules: [kept] });
      const unknown = await runCli(['approvals', 'revoke', 'rule-00000000'], { env: s.env });
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr, `chatty-gateway: no approval rule "rule-00000000" in ${s.defaultFile} (see: chatty-gateway approvals list)\n`);
    } finally {
      s.remove();
    }
  });

  it('a malformed file is refused naming it, by list, revoke and serve alike, and never overwritten', async () => {
    const s = scratch();
    try {
      const file = join(s.dir, 'approvals.json');
      const text = '{"version":1,"rules":[{"id":"rule-1","effect":"maybe"}]}';
      writeFileSync(file, text, { mode: 0o600 });
      for (const args of [['approvals', 'list', '--approvals-file', file], ['approvals', 'revoke', 'rule-1', '--approvals-file', file]]) {
        const result = await runCli(args, { env: s.env });
        assert.equal(result.code, 1);
        assert.match(result.stderr, new RegExp(`^chatty-gateway: approvals file ${file} is not a rules file at rules\\.0\\.effect: .*; it was left as it is\\n$`));
      }
      const modules = join(s.dir, 'modules');
      mkdirSync(modules);
      const serve = await runCli(['serve', '--modules-dir', modules, '--runtime-dir', join(s.dir, 'run'), '--approvals-file', file, '--no-bundled-agents'], { env: s.env });
      assert.equal(serve.code, 1);
      assert.match(serve.stderr, new RegExp(`chatty-gateway: approvals file ${file} is not a rules file`));
      assert.equal(readFileSync(file, 'utf8'), text);
    } finally {
      s.remove();
    }
  });
});

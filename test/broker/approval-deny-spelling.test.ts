/**
 * A deny rule must not be stepped around by spelling what it denies another way. A rule decides
 * without anyone being asked, whatever the root's mode: under `serve --approvals allow` a deny
 * rule is the only thing between a worker and what it asks, so a write to `./config/secrets.json`
 * past a deny of `config/secrets.json` was approved unasked (`by: mode:allow`). Real workers, a
 * real broker; the handler answers as `--approvals allow` does.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { AuditRow } from '../../main/index.js';
import { plan, splitJson, startBroker } from './helpers.js';

const approve = (kind: 'exec' | 'write', command: string) => ({ approve: { kind, command_or_path: command } });

describe('a deny rule is not stepped around by another spelling', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'approval-deny-spelling-')));
  after(() => rmSync(base, { recursive: true, force: true }));
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'config'), { recursive: true });
  mkdirSync(join(ws, 'secrets'));
  symlinkSync('secrets', join(ws, 'vault'));

  it('exact and glob write denies cover ./x, x//y, a/../x, the absolute path, another case and a linked folder; an exact exec deny covers other quoting and spacing and the command run anywhere in the line', async () => {
    const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
    try {
      t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
      const writeDeny = t.broker.human.rules.add({ effect: 'deny', kind: 'write', agent: '*', match: { exact: 'config/secrets.json' } });
      const globDeny = t.broker.human.rules.add({ effect: 'deny', kind: 'write', agent: '*', match: { glob: 'secrets/**' } });
      const execDeny = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { exact: 'make deploy' } });
      const rows: AuditRow[] = [];
      t.broker.human.audit.subscribe((row) => rows.push(row));
      const cases: [kind: 'exec' | 'write', text: string, rule: string | undefined][] = [
        ['write', 'config/secrets.json', writeDeny.id],
        ['write', './config/secrets.json', writeDeny.id],
        ['write', 'config//secrets.json', writeDeny.id],
        ['write', 'src/../config/secrets.json', writeDeny.id],
        ['write', join(ws, 'config/secrets.json'), writeDeny.id],
        ['write', 'Config/Secrets.json', writeDeny.id],
        ['write', 'Secrets/key.pem', globDeny.id],
        ['write', 'vault/key.pem', globDeny.id],
        ['exec', 'make deploy', execDeny.id],
        ['exec', 'make  deploy', execDeny.id],
        ['exec', "make 'deploy'", execDeny.id],
        ['exec', 'make deploy ', execDeny.id],
        ['exec', 'cd . && make deploy', execDeny.id],
        ['exec', 'env A=1 make deploy', execDeny.id],
        // What the rules do not deny is left to the mode.
        ['write', 'config/other.json', undefined],
        ['write', 'notes/secrets/key.pem', undefined],
        ['exec', 'make deploy-docs', undefined],
        ['exec', 'make test', undefined],
      ];
      const result = await t.root.invoke('coder', plan({ seq: cases.map(([kind, text]) => approve(kind, text)) }));
      assert.equal(result.success, true, result.error);
      const verdicts = (splitJson(result.response) as string[][]).map((v) => v[0]);
      assert.deepEqual(
        cases.map(([kind, text], i) => [kind, text, verdicts[i], rows[i]?.by]),
        cases.map(([kind, text, rule]) => [kind, text, rule ? 'denied' : 'approved', rule ? `rule:${rule}` : 'mode:allow']),
      );
    } finally {
      await t.close();
    }
  });

  it('a deny exec rule covers redirections (an fd number, input), sh -c, eval, su -c, env -S and wrappers; a program it cannot read asks the person, and under a mode is denied', async () => {
    const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
    try {
      const asked: string[] = [];
      let person = false; // false: the handler answers as --approvals allow; true: a person who approves
      t.root.onApproval((request) => {
        if (!person) return { verdict: 'approved', by: 'mode:allow' };
        asked.push(request.command_or_path);
        return 'approved';
      });
      const exact = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { exact: 'make deploy' } });
      const prefix = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { prefix: 'git push' } });
      const rows: AuditRow[] = [];
      t.broker.human.audit.subscribe((row) => rows.push(row));
      const cases: [text: string, rule: string | undefined][] = [
        ['make deploy 2>/dev/null', exact.id],
        ['make deploy 2>&1', exact.id],
        ['make deploy </dev/null', exact.id],
        ['make deploy 1>out.txt', exact.id],
        ['make deploy <<<x', exact.id],
        ['make deploy <>x', exact.id],
        ["sh -c 'make deploy'", exact.id],
        ['bash -ec "make deploy 2>&1"', exact.id],
        ['eval "make deploy"', exact.id],
        ["sudo sh -c 'eval \"make deploy\"'", exact.id],
        ["su -c 'make deploy'", exact.id],
        ["env -S 'make deploy'", exact.id],
        // env's own escapes (`\_` separates words) and options read again from the string.
        ["env -S 'make\\_deploy'", exact.id],
        ["env -S '-i make\\_deploy'", exact.id],
        ["env -S 'git\\_push\\c'", prefix.id],
        ['env make deploy', exact.id],
        ['command make deploy', exact.id],
        ['exec make deploy', exact.id],
        ['nohup make deploy', exact.id],
        ['time make deploy', exact.id],
        ["find . -maxdepth 0 -exec make deploy ';'", exact.id],
        ['\\make deploy', exact.id],
        ['"make" deploy', exact.id],
        ["sh -c 'git push --force'", prefix.id],
        ['eval "git push"', prefix.id],
        ['git push 2>&1', prefix.id],
        // A program (or word) it cannot read could be what the rule denies: no one to ask under a mode, so denied.
        ['$(echo make) deploy', exact.id],
        ['$M deploy', exact.id],
        ['make $TARGET', exact.id],
        ['`echo git` push', exact.id], // a program it cannot read could be either rule's: the first one added is named
        ['git $SUB', prefix.id],
        // What the rules do not deny is left to the mode.
        ['make deploy-docs 2>&1', undefined],
        ['make test </dev/null', undefined],
        ['echo $HOME', undefined],
        ['$HOME/bin/tool --version', undefined], // a program named by its path: tool, whatever the folder
        ['$DIR/make deploy', exact.id],
        ['make\\ deploy', undefined], // one word: a program named "make deploy", not make
      ];
      // In tasks of 16 (a connection's calls are rate limited, with a burst).
      const verdicts: (string | undefined)[] = [];
      for (let from = 0; from < cases.length; from += 16) {
        const result = await t.root.invoke('coder', plan({ seq: cases.slice(from, from + 16).map(([text]) => approve('exec', text)) }));
        assert.equal(result.success, true, result.error);
        verdicts.push(...(splitJson(result.response) as string[][]).map((v) => v[0]));
      }
      assert.deepEqual(
        cases.map(([text], i) => [text, verdicts[i], rows[i]?.by]),
        cases.map(([text, rule]) => [text, rule ? 'denied' : 'approved', rule ? `rule:${rule}` : 'mode:allow']),
      );
      // With a person at the root, what the rule may cover but the gateway cannot read is asked, not denied.
      person = true;
      const unread = ['$(echo make) deploy', 'git $SUB'];
      const again = await t.root.invoke('coder', plan({ seq: unread.map((text) => approve('exec', text)) }));
      assert.deepEqual(splitJson(again.response), [['approved'], ['approved']]);
      assert.deepEqual(asked, unread);
      assert.deepEqual(rows.slice(cases.length).map((row) => row.by), ['human', 'human']);
    } finally {
      await t.close();
    }
  });
  it('a program named through ${…} or a brace expansion may be what a deny rule denies: under a mode it is denied by the rule', async () => {
    const t = startBroker(['coder'], { root: { workspaceRoot: ws } });
    try {
      t.root.onApproval(() => ({ verdict: 'approved', by: 'mode:allow' }));
      const exact = t.broker.human.rules.add({ effect: 'deny', kind: 'exec', agent: '*', match: { exact: 'make deploy' } });
      const rows: AuditRow[] = [];
      t.broker.human.audit.subscribe((row) => rows.push(row));
      // Each runs `make deploy` in a shell (`P=make/x; ${P%/x} deploy` in dash; `P=xake; ${P/x/m} deploy` in bash; `{make,deploy}` in bash).
      const cases: [text: string, rule: string | undefined][] = [
        ['${P%/x} deploy', exact.id],
        ['${P/x/m} deploy', exact.id],
        ['${P//\\//} deploy', exact.id],
        ["bash -c '{make,deploy}'", exact.id],
        ['{make,deploy}', exact.id],
        ['{/bin/make,x} deploy', exact.id],
        ['make {deploy,x}', exact.id],
        ['{make,x} {deploy,y}', exact.id],
        ['m{a..a}ke deploy', exact.id],
        ['${D}/make deploy', exact.id], // a folder through a variable: the program is make
        // What the rules do not deny is left to the mode.
        ['${D}/tool --version', undefined],
        ['echo {a,b}', undefined],
        ['make test', undefined],
      ];
      const result = await t.root.invoke('coder', plan({ seq: cases.map(([text]) => approve('exec', text)) }));
      assert.equal(result.success, true, result.error);
      const verdicts = (splitJson(result.response) as string[][]).map((v) => v[0]);
      assert.deepEqual(
        cases.map(([text], i) => [text, verdicts[i], rows[i]?.by]),
        cases.map(([text, rule]) => [text, rule ? 'denied' : 'approved', rule ? `rule:${rule}` : 'mode:allow']),
      );
    } finally {
      await t.close();
    }
  });
});

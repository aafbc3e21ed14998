/**
 * An archive extracted into a folder above the workspace that holds the gateway's files
 * (`tar xf x.tar -C ~`, `-C ..`, `unzip -d ..`, `cd .. && tar xf proj/x.tar`) is asked untagged
 * with a `tar`/`unzip` prefix offered, though `tar xf x.tar -C .config/chatty` is tagged: the
 * shell really replaces the rules file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigPlaces, vouchedContext } from '../../main/broker/approvals/index.js';

test('extraction into a folder above the workspace holding the rules file is tagged gateway-config', () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-extract-above-')));
  const saved = process.env['HOME'];
  try {
    process.env['HOME'] = home;
    mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
    mkdirSync(join(home, 'proj', 'stage', '.config', 'chatty'), { recursive: true });
    const rules = join(home, '.config', 'chatty', 'approvals.json');
    writeFileSync(rules, '[]');
    writeFileSync(join(home, 'proj', 'stage', '.config', 'chatty', 'approvals.json'), '[{"forged":true}]');
    execFileSync('tar', ['cf', join(home, 'proj', 'x.tar'), '-C', join(home, 'proj', 'stage'), '.config']);
    const ws = join(home, 'proj');
    // The shell: the archive replaces the live rules file.
    execFileSync('/bin/bash', ['-c', 'tar xf x.tar -C ..'], { cwd: ws });
    assert.equal(readFileSync(rules, 'utf8'), '[{"forged":true}]');
    const config = new ConfigPlaces([rules]);
    const lines = ['tar xf x.tar -C ..', 'tar xf x.tar -C ~', 'tar -xf x.tar --directory=..', 'unzip -o x.zip -d ..', 'cd .. && tar xf proj/x.tar'];
    const untagged = lines.flatMap((line) => {
      const c = vouchedContext('exec', line, undefined, ws, undefined, config);
      return c.danger.includes('gateway-config') && c.proposals.length === 0 ? [] : [`${line} [${c.danger.join(',')}] offers ${c.proposals.length}`];
    });
    assert.deepEqual(untagged, []);
    // Readers that name the folder stay untagged (`grep -r x .` writes nothing), as does an archive only listed.
    const plain = ['grep -r TODO ..', 'tar tf x.tar -C ..', 'ls ~'].filter((line) => vouchedContext('exec', line, undefined, ws, undefined, config).danger.includes('gateway-config'));
    assert.deepEqual(plain, []);
  } finally {
    if (saved === undefined) delete process.env['HOME'];
    else process.env['HOME'] = saved;
    rmSync(home, { recursive: true, force: true });
  }
});

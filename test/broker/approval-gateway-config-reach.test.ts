/**
 * Lines that reach the gateway's rules file by a path the workspace does not explain were asked
 * with no gateway-config tag and an exact rule offered (which then approves the same line
 * unasked): from a folder the line changed to (`cd sub && … ../.config/…`, `cd ..`, `git -C ..`,
 * `env --chdir=..`, `cd "$D"`), through an interpreter's inline code (`python3 -c`, `node -e`),
 * and through a write target the shell builds at run time (`> $OUT`, `> $(cat f)`, backticks).
 * Ordinary lines stay untagged. Also (moved from approval-gateway-config-untagged): the file through
 * $XDG_CONFIG_HOME (where defaultApprovalsFile puts it when set, and which workers inherit) and
 * through an option glued to its value (`sort -oFILE`). And (later) folders line-folders.ts did not
 * place: `cd -- ..`, `pushd -- ..`, a quoted `eval 'cd ..'`, a line that sets or exports CDPATH.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigPlaces, defaultApprovalsFile, vouchedContext } from '../../main/broker/approvals/index.js';

function withHome(run: (home: string, config: ConfigPlaces) => void): void {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'config-reach-')));
  const savedHome = process.env['HOME'];
  const savedXdg = process.env['XDG_CONFIG_HOME'];
  try {
    process.env['HOME'] = home;
    delete process.env['XDG_CONFIG_HOME'];
    mkdirSync(join(home, '.config', 'chatty'), { recursive: true });
    mkdirSync(join(home, 'sub'));
    mkdirSync(join(home, 'proj', 'src'), { recursive: true });
    const rules = join(home, '.config', 'chatty', 'approvals.json');
    writeFileSync(rules, '[]');
    run(home, new ConfigPlaces([rules]));
  } finally {
    if (savedHome === undefined) delete process.env['HOME'];
    else process.env['HOME'] = savedHome;
    if (savedXdg === undefined) delete process.env['XDG_CONFIG_HOME'];
    else process.env['XDG_CONFIG_HOME'] = savedXdg;
    rmSync(home, { recursive: true, force: true });
  }
}

function untagged(lines: readonly string[], workspace: string, config: ConfigPlaces): string[] {
  return lines.flatMap((line) => {
    const context = vouchedContext('exec', line, undefined, workspace, undefined, config);
    return context.danger.includes('gateway-config') && context.proposals.length === 0 ? [] : [`${line}  [${context.danger.join(', ')}] offers ${context.proposals.length}`];
  });
}

test('a line reaching the rules file from a folder it changed to, an inline script or a variable target is tagged gateway-config and offers nothing', () => {
  withHome((home, config) => {
    // serve started in $HOME: the workspace holds .config/chatty/
    assert.deepEqual(untagged([
      'cd sub && cp x ../.config/chatty/approvals.json',
      'cd sub && echo [] > ../.config/chatty/approvals.json',
      'cd sub && cp x ../.config/chatty/*',
      `python3 -c "open('.config/chatty/approvals.json','w').write('[]')"`,
      `node -e "require('fs').writeFileSync('.config/chatty/approvals.json','[]')"`,
      'OUT=.config/chatty/approvals.json; echo [] > $OUT',
      'echo [] > "$OUT"',
      'echo [] > $(cat where)',
      'echo [] > `cat where`',
      'cp x $OUT',
      'cp x /proc/self/cwd/.config/chatty/approvals.json',
    ], home, config), []);
    // A workspace below home: `..` and `~` are where the files are.
    assert.deepEqual(untagged([
      'cd .. && cp x .config/chatty/*',
      'cd ~ && rm -rf .config/chatty',
      'git -C .. checkout .config/chatty',
      'env --chdir=.. cp x .config/chatty/a*',
      'cd "$D" && cp x chatty/*',
      'cd - && cp x .config/chatty/*',
    ], join(home, 'proj'), config), []);
  });
});

test('ordinary lines that change folder or redirect are not tagged gateway-config', () => {
  withHome((home, config) => {
    const tagged = ['npm test', 'cd src && npm test', 'cd src && make > log.txt', 'git -C src status', 'grep -C 3 foo file', 'cd "$D" && ls', 'cd .. && ls proj', 'echo x > "$HOME/notes.txt"'].filter((line) =>
      vouchedContext('exec', line, undefined, join(home, 'proj'), undefined, config).danger.includes('gateway-config'),
    );
    assert.deepEqual(tagged, []);
  });
});

test('the rules file through $XDG_CONFIG_HOME or an option glued to its value is tagged gateway-config and offers nothing', () => {
  withHome((home, config) => {
    process.env['XDG_CONFIG_HOME'] = join(home, '.config'); // put back by withHome
    assert.equal(defaultApprovalsFile(), join(home, '.config', 'chatty', 'approvals.json'));
    assert.deepEqual(untagged(['cp notes.json "$XDG_CONFIG_HOME/chatty/approvals.json"', 'sort -o.config/chatty/approvals.json notes.json'], home, config), []);
  });
});

// `cd -- ..`, `pushd -- ..`, a quoted `eval 'cd ..'` and CDPATH were not placed by line-folders.ts: asked untagged, an exact rule offered.
test('cd/pushd with `--`, a quoted eval, CDPATH: the folder changed to is not placed', () => {
  withHome((home, config) => {
    assert.deepEqual(untagged([
      'cd -- .. && cp x .config/chatty/a*',
      'cd -L -- .. && cp x .config/chatty/a*',
      'pushd -- .. && cp x .config/chatty/a*',
      "eval 'cd ..' && cp x .config/chatty/a*",
      'CDPATH=.. cd .config/chatty && cp x a*',
      'export CDPATH=..; cd .config/chatty && cp x a*',
    ], join(home, 'proj'), config), []);
    // Ordinary lines stay untagged.
    const plain = ['cd -- src && ls', 'cd -P src && make', "eval 'echo hi' && ls"].filter((line) => vouchedContext('exec', line, undefined, join(home, 'proj'), undefined, config).danger.includes('gateway-config'));
    assert.deepEqual(plain, []);
  });
});

// git's work tree is a folder its paths are read from, as -C is: `git --work-tree=.. checkout -- .config/chatty` restored ~/.config/chatty.
test('git --work-tree=.. (and GIT_WORK_TREE, --git-dir) is a folder the line writes from', () => {
  withHome((home, config) => {
    assert.deepEqual(untagged([
      'git --work-tree=.. checkout HEAD -- .config/chatty',
      'git --work-tree .. checkout -- .config/chatty',
      'GIT_WORK_TREE=.. git checkout -- .config/chatty',
      'git --git-dir=../other/.git checkout -- chatty/approvals.js?n',
    ], join(home, 'proj'), config), []);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';

/**
 * `chatty-gateway plugin build <dir>` of a cloned plugin printed the source check's refusal with
 * the plugin's text raw: an import specifier with a line break wrote a line of its own, looking
 * like the CLI's, and U+202E reached the terminal in the specifier and in the caret excerpt (the
 * reviewer's repro, /tmp/review-plugins2/build-cli-raw.test.ts). The specifier is now quoted as
 * schemas are (JSON, ASCII only, cut), the excerpt escaped with its caret under the escaped text,
 * and the CLI escapes every line it prints and indents each after the first. Through the real
 * bin; every case is refused by the check, before any componentize-js build.
 */
const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'chatty-build-cli-raw-'));
after(() => rmSync(root, { recursive: true, force: true }));
const cli = (dir: string) => spawnSync(process.execPath, ['--import', 'tsx', BIN, 'plugin', 'build', dir], { encoding: 'utf8', timeout: 170_000 });
const plugin = (name: string, source: string): string => {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n`);
  writeFileSync(join(dir, 'src', 'plugin.js'), source);
  return dir;
};

describe('plugin build prints the plugin text as visible lines', { timeout: 180_000 }, () => {
  it('an import specifier with a line break does not write a line of its own', () => {
    const dir = plugin('nl', `import x from "./a\\nchatty-gateway plugin build: built /home/you/ok/plugin.wasm (1.0 MiB in 2.0 s)";\nexport const plugin = {};\n`);
    const r = cli(dir);
    assert.equal(r.status, 1);
    assert.doesNotMatch(r.stderr, /\nchatty-gateway plugin build: built /);
    assert.match(r.stderr, /import "\.\/a\\nchatty-gateway plugin build: built \/home\/you\/ok\/plugin\.wasm \(1\.0 MiB in 2/);
  });
  it('a bidi override in an import does not reach the terminal raw', () => {
    const dir = plugin('bidi', `import x from "./evil\u202Esj.txt";\nexport const plugin = {};\n`);
    const r = cli(dir);
    assert.equal(r.status, 1);
    assert.doesNotMatch(r.stderr, /\u202E/);
    assert.match(r.stderr, /import "\.\/evil\\u202esj\.txt": no such file/);
  });
  it('a syntax error line with a bidi override shows escaped, the caret under its column', () => {
    const dir = plugin('syntax', `const a = "\u202E" +;\nexport const plugin = {};\n`);
    const r = cli(dir);
    assert.equal(r.status, 1);
    assert.doesNotMatch(r.stderr, /\u202E/);
    assert.equal(r.stderr.split('\n').slice(1).join('\n'), `chatty-gateway plugin build: src/plugin.js:1:16: Unexpected token\n  const a = "\\u202e" +;\n                      ^\n`);
  });
});

/**
 * `chatty-gateway plugin grant NAME` (issue 20 item 3): shows what module NAME asks for, found in
 * `--modules-dir` by the name its module.toml declares, and records the grant for its component's
 * digest in the grants file beside `--approvals-file` (as `serve` keeps it).
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { componentDigest } from '../../main/plugins/index.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = tempDir('chatty-plugin-grant-');
after(() => scratch.remove());

let component: Uint8Array;
let count = 0;
before(async () => {
  component = await buildFixture('echo');
});

/** A modules folder holding `notes` (in a folder named otherwise: found by its declared name) and `plain`. */
function place(): { modules: string; approvals: string; grants: string } {
  const dir = join(scratch.path, `case-${++count}`);
  const modules = join(dir, 'modules');
  writeModuleDir(modules, 'notes-folder', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n[network]\nallow = ["api.example.com:443"]\n'), component, extra: { 'data/note.txt': 'a note' } });
  writeModuleDir(modules, 'plain', { manifest: fixtureManifest('plain'), component });
  return { modules, approvals: join(dir, 'config', 'approvals.json'), grants: join(dir, 'config', 'plugin-grants.json') };
}

const grant = (at: ReturnType<typeof place>, name: string, ...extra: string[]) => runCli(['plugin', 'grant', name, '--modules-dir', at.modules, '--approvals-file', at.approvals, ...extra]);

test('shows what the module asks for, with its digest, and records the grant beside the approval rules (0600)', async () => {
  const at = place();
  const result = await grant(at, 'notes');
  assert.equal(result.code, 0, result.stderr);
  const digest = componentDigest(component);
  assert.equal(
    result.stdout,
    `plugin notes 1.0.0 (${digest.slice(0, 19)}…) asks for:\n    file: read files under ./data\n    network: api.example.com:443\n  digest: ${digest}\n` +
      `granted, remembered in ${at.grants}: a running serve that waits for it serves it within a second or two\n`,
  );
  assert.equal(statSync(at.grants).mode & 0o777, 0o600);
  const file = JSON.parse(readFileSync(at.grants, 'utf8')) as { grants: { name: string; digest: string; granted: unknown[] }[] };
  assert.deepEqual(file.grants.map(({ name, digest, granted }) => ({ name, digest, granted })), [
    { name: 'notes', digest, granted: [{ capability: 'file', detail: 'read files under ./data' }, { capability: 'network', detail: 'api.example.com:443' }] },
  ]);
  const again = await grant(at, 'notes');
  assert.match(again.stdout, /\nalready granted for this digest in /);
});

test('--json: one line with the module, its digest, its asks and what this run granted', async () => {
  const at = place();
  const result = await grant(at, 'notes', '--json');
  assert.equal(result.code, 0, result.stderr);
  const line = JSON.parse(result.stdout) as Record<string, unknown>;
  assert.deepEqual(line, {
    plugin: 'notes',
    version: '1.0.0',
    dir: join(at.modules, 'notes-folder'),
    digest: componentDigest(component),
    asks: [{ capability: 'file', detail: 'read files under ./data' }, { capability: 'network', detail: 'api.example.com:443' }],
    granted: [{ capability: 'file', detail: 'read files under ./data' }, { capability: 'network', detail: 'api.example.com:443' }],
    file: at.grants,
  });
  const plain = JSON.parse((await grant(at, 'plain', '--json')).stdout) as { asks: unknown[]; granted: unknown[] };
  assert.deepEqual([plain.asks, plain.granted], [[], []]);
});

test('a name not in the folder is one line naming the modules there; a malformed grants file is refused and left as it is', async () => {
  const at = place();
  const missing = await grant(at, 'nope');
  assert.equal(missing.code, 1);
  assert.equal(missing.stderr, `chatty-gateway: no module named "nope" in ${at.modules} (the modules there: notes, plain); give the folder serve serves with --modules-dir\n`);

  const bad = '{"version": 2}\n';
  const badAt = { ...at, approvals: join(at.modules, '..', 'approvals.json'), grants: join(at.modules, '..', 'plugin-grants.json') };
  writeFileSync(badAt.grants, bad, { mode: 0o600 });
  const refused = await grant(badAt, 'notes');
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^chatty-gateway: grants file .*plugin-grants\.json is not a plugin grants file at version: .*; it was left as it is\n$/);
  assert.equal(readFileSync(badAt.grants, 'utf8'), bad);
});

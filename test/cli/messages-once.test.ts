// A module load failure and a clamp warning reach stderr once each: the registry's logger says
// them, and the CLI does not say them again. Through the real bin, run from a directory with no
// package.json in it or above it, as a user's plugins folder elsewhere would be.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { collect, exited, firstLine, outsideAnyPackage, spawnCli } from '../helpers/cli.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = outsideAnyPackage('chatty-once-');
const modulesDir = join(scratch.path, 'modules');
before(async () => {
  writeModuleDir(modulesDir, 'greedy', {
    component: await buildFixture('echo'),
    manifest: fixtureManifest('greedy', '\n[resources]\nmax_memory_mb = 100000\n'),
  });
  writeModuleDir(modulesDir, 'broken', { manifest: '[module]\nname = "broken"\nunknown = 1\n' });
});
after(() => scratch.remove());

test('serve prints a load failure and a clamp warning once each, as one chatty-gateway line', async () => {
  const child = spawnCli(['serve', '--json', '--runtime-dir', 'run', '--modules-dir', 'modules'], process.env, scratch.path);
  const stderr = collect(child.stderr);
  await firstLine(child);
  child.kill('SIGTERM');
  assert.equal((await exited(child)).code, 0);
  const lines = (await stderr).trim().split('\n');
  const failures = lines.filter((line) => line.includes('module not loaded'));
  const clamps = lines.filter((line) => line.includes('max_memory_mb = 100000'));
  assert.equal(failures.length, 1, `one failure line in:\n${lines.join('\n')}`);
  assert.equal(clamps.length, 1, `one clamp line in:\n${lines.join('\n')}`);
  assert.match(failures[0]!, new RegExp(`^chatty-gateway: warning: module not loaded: ${join(modulesDir, 'broken')}: module\\.toml: `));
  assert.match(clamps[0]!, /^chatty-gateway: warning: module greedy: \[resources\] max_memory_mb = 100000 is above the host ceiling; clamped to \d+ MiB$/);
  assert.equal(lines.length, 2, `nothing else on stderr:\n${lines.join('\n')}`);
});

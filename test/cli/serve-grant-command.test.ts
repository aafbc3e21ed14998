/**
 * The `plugin grant` line a refusal prints works when typed as printed (issue 20 item 3, found by
 * a new user): a `serve --modules-dir … --approvals-file …` that cannot ask names both in it, as
 * absolute paths, so the command typed in another terminal, in another folder, finds the module
 * and writes the grants file this serve reads, and the serve serves the module.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { grantCommand } from '../../main/cli/grant-command.js';
import { exited, firstLine, spawnCli, watchOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = tempDir('chatty-grant-command-');
after(() => scratch.remove());

let component: Uint8Array;
before(async () => {
  component = await buildFixture('echo');
});

const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** Runs `line` in bash as a person would type it, `chatty-gateway` being this checkout's CLI. */
async function typeInShell(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const script = `chatty-gateway() { exec "${process.execPath}" --import "${TSX}" "${BIN}" "$@"; }\n${line}`;
  const child = spawn('bash', ['-c', script], { cwd, env, stdio: 'pipe' });
  child.stdin.end();
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const { code } = await exited(child);
  return { code, out };
}

test('grantCommand names --modules-dir and --approvals-file as absolute, shell-quoted paths, and neither when serve used the defaults', () => {
  assert.equal(grantCommand('notes', {}), 'chatty-gateway plugin grant notes');
  assert.equal(grantCommand('notes', { modulesDir: '/a b/plugins', approvalsFile: '/c/rules.json' }), "chatty-gateway plugin grant notes --modules-dir '/a b/plugins' --approvals-file /c/rules.json");
  assert.match(grantCommand('notes', { modulesDir: 'plugins' }), /^chatty-gateway plugin grant notes --modules-dir \/\S+\/plugins$/);
});

test('no one to ask: the command GET / and the log print, typed as printed from another folder, grants the module and the waiting serve serves it', { timeout: 180_000 }, async () => {
  const modules = join(scratch.path, 'my plugins'); // a space: the printed command must quote it
  writeModuleDir(modules, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component, extra: { 'data/note.txt': 'a note' } });
  const approvals = join(scratch.path, 'elsewhere', 'rules.json');
  const run = join(scratch.path, 'run');
  const child = spawnCli(['serve', '--json', '--runtime-dir', run, '--modules-dir', modules, '--no-bundled-agents', '--approvals-file', approvals]);
  const ended = exited(child);
  child.stderr.setEncoding('utf8');
  const err = watchOutput(child, child.stderr, ended);
  try {
    const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
    child.stdout.resume();
    const auth = { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` };
    const index = async () => (JSON.parse((await unixRequest(ready.socket, { path: '/', headers: auth })).body) as { modules: { name: string; state?: string; reason?: string }[] }).modules;
    const [entry] = await index();
    assert.equal(entry?.state, 'ungranted');
    const printed = /to grant it: `([^`]+)`/.exec(entry!.reason!)?.[1];
    assert.equal(printed, grantCommand('notes', { modulesDir: modules, approvalsFile: approvals }));
    assert.ok(err.text().includes(printed!), 'the log prints the same command');
    // Another terminal: another folder, and defaults (config, cache) that are not serve's.
    const other = join(scratch.path, 'other-terminal');
    mkdirSync(other, { recursive: true });
    const typed = await typeInShell(printed!, other, { ...process.env, HOME: other, XDG_CONFIG_HOME: join(other, 'config'), XDG_CACHE_HOME: join(other, 'cache') });
    assert.equal(typed.code, 0, typed.out);
    await err.until(() => err.text().includes('module notes: served, now that it is granted'), 'served once granted');
    assert.deepEqual((await index()).map((m) => [m.name, m.state]), [['notes', undefined]]);
  } finally {
    child.kill('SIGTERM');
    await ended;
  }
});

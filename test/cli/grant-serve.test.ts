/**
 * `serve`'s grant prompt on a real pseudo-terminal (issue 20 item 3): two plugins built from the
 * WAT fixtures ask for files; each request is its own prompt after the ready lines, in turn; `y`
 * serves the first (and the grants file keeps it), `n` leaves the second unserved, and `GET /` says
 * which grant it misses and how to give it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { exited, ptyScreen, spawnCliOnPty } from '../helpers/cli.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

let echo: Uint8Array;
before(async () => {
  echo = await buildFixture('echo');
});

const FILES = '[files]\nroot = "data"\n';

test('serve asks for each plugin\'s grant at its prompt: y serves it and remembers it, n leaves it unserved with the reason', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatty-grant-pty-'));
  temporary.push(dir);
  const modules = join(dir, 'modules');
  for (const name of ['notes-a', 'notes-b']) writeModuleDir(modules, name, { manifest: fixtureManifest(name, FILES), component: echo, extra: { 'data/note.txt': 'a note' } });
  const approvalsFile = join(dir, 'config', 'approvals.json');
  const child = spawnCliOnPty(['serve', '--runtime-dir', join(dir, 'run'), '--modules-dir', modules, '--no-bundled-agents', '--approvals-file', approvalsFile], dir);
  const ended = exited(child as never);
  const { screen, until } = ptyScreen(child, ended, 60);
  try {
    let at = await until('  stop:   Ctrl-C\n');
    // The two load side by side: either may be asked first. The first asked is granted, the other denied.
    at = await until('chatty-gateway: plugin notes-', at);
    const granted = screen().slice(at, at + 1) === 'a' ? 'notes-a' : 'notes-b';
    const denied = granted === 'notes-a' ? 'notes-b' : 'notes-a';
    const head = `chatty-gateway: plugin ${granted} 1.0.0 (sha256:`;
    at = await until(head, at - 'chatty-gateway: plugin notes-'.length);
    const first = await until('  grant? [y/N] ', at);
    const shown = screen().slice(at - head.length, first);
    assert.match(shown, new RegExp(`^chatty-gateway: plugin ${granted} 1\\.0\\.0 \\(sha256:[0-9a-f]{12}…\\) asks for:\n {4}file: read files under \\./data\n {2}digest: sha256:[0-9a-f]{64}\n {2}folder: ${modules.replaceAll('/', '\\/')}\\/${granted}\n {2}grant\\? \\[y\\/N\\] $`), shown);
    assert.ok(!screen().includes(`${denied} 1.0.0`), 'the second waits its turn');
    child.stdin.write('y\r');
    at = await until('  granted\n', first);
    at = await until(`chatty-gateway: plugin ${denied} 1.0.0 (sha256:`, at);
    at = await until('  grant? [y/N] ', at);
    child.stdin.write('n\r');
    // The command names this serve's folder and file, so typed in another terminal it reaches them.
    await until(`  denied (grant it later with: chatty-gateway plugin grant ${denied} --modules-dir ${modules} --approvals-file ${approvalsFile})\n`, at);

    const socket = /socket: (\S+)/.exec(screen())![1]!;
    const token = /token: +(\S+)/.exec(screen())![1]!;
    const auth = { authorization: `Bearer ${readFileSync(token, 'utf8')}` };
    type Index = { modules: { name: string; state?: string; reason?: string }[] };
    // Granted, the module loads in the background, and says so once it is served; GET / follows.
    await until(`module ${granted}: served, now that it is granted\n`);
    const index = JSON.parse((await unixRequest(socket, { path: '/', headers: auth })).body) as Index;
    assert.deepEqual(index.modules.filter((m) => m.state === undefined).map((m) => m.name), [granted], JSON.stringify(index));
    const b = index.modules.find((m) => m.name === denied);
    assert.equal(b?.state, 'ungranted', JSON.stringify(index));
    assert.match(b?.reason ?? '', new RegExp(`was denied; to grant it: \`chatty-gateway plugin grant ${denied} --modules-dir \\S+ --approvals-file \\S+\``));
    const kept = readFileSync(join(dir, 'config', 'plugin-grants.json'), 'utf8');
    assert.ok(kept.includes(granted) && !kept.includes(denied), kept);
  } finally {
    child.stdin.write('\x03');
    await ended;
    child.stdin.end();
  }
});

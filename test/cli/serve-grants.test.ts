/**
 * `serve` and plugin grants (issue 20 item 3), end to end: a real `serve` child, a real component
 * asking for `file`, the terminal root's real grant prompt on its (piped) stdin, `GET /` on its
 * socket. Granted at the prompt → served and remembered beside the approval rules, so the next
 * start serves it without asking; a start with no one to ask (no terminal) → not served, with the
 * reason on `GET /`, in the log and on its MCP route; `--approvals allow` → served, not remembered.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { componentDigest } from '../../main/plugins/index.js';
import { exited, firstLine, runCli, spawnCli, watchOutput } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { unixRequest } from '../helpers/http.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

const scratch = tempDir('chatty-serve-grants-');
after(() => scratch.remove());

interface IndexEntry {
  name: string;
  state?: string;
  reason?: string;
}

let component: Uint8Array;
before(async () => {
  component = await buildFixture('echo');
});

/** A fresh home for one test: a modules folder with `notes` ([files] root = data). */
function place(name: string): { modules: string; approvals: string; grants: string; run: string } {
  const dir = join(scratch.path, name);
  const modules = join(dir, 'modules');
  writeModuleDir(modules, 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component, extra: { 'data/note.txt': 'a note' } });
  return { modules, approvals: join(dir, 'config', 'approvals.json'), grants: join(dir, 'config', 'plugin-grants.json'), run: join(dir, 'run') };
}

/** `serve --json` on `at`, with `extra` arguments; its ready line read, its stderr watched. */
async function serve(at: ReturnType<typeof place>, extra: readonly string[]) {
  const child = spawnCli(['serve', '--json', '--runtime-dir', at.run, '--modules-dir', at.modules, '--no-bundled-agents', '--approvals-file', at.approvals, ...extra]);
  const ended = exited(child);
  child.stderr.setEncoding('utf8');
  const err = watchOutput(child, child.stderr, ended);
  const ready = JSON.parse(await firstLine(child)) as { socket: string; token: string };
  const out = watchOutput(child, child.stdout, ended);
  child.stdout.resume(); // firstLine paused it
  const auth = { authorization: `Bearer ${readFileSync(ready.token, 'utf8')}` };
  return {
    child,
    err,
    out,
    index: async (): Promise<IndexEntry[]> => (JSON.parse((await unixRequest(ready.socket, { path: '/', headers: auth })).body) as { modules: IndexEntry[] }).modules,
    mcp: () => unixRequest(ready.socket, { path: '/mcp/notes', method: 'POST', headers: { ...auth, accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) }),
    waitErr: (text: string | RegExp) => err.until(() => (typeof text === 'string' ? err.text().includes(text) : text.test(err.text())), String(text)),
    async stop(): Promise<void> {
      child.kill('SIGTERM');
      await ended;
    },
  };
}

test('granted at the prompt: served, remembered beside the approval rules; the next start (no one to ask) serves it without asking', { timeout: 180_000 }, async () => {
  const at = place('prompt');
  const first = await serve(at, ['--approvals', 'prompt']);
  try {
    await first.waitErr('  grant? [y/N] ');
    assert.match(first.err.text(), /plugin notes 1\.0\.0 \(sha256:[0-9a-f]{12}…\) asks for:\n {4}file: read files under \.\/data\n {2}digest: sha256:[0-9a-f]{64}\n/);
    assert.deepEqual((await first.index()).map((m) => [m.name, m.state]), [['notes', 'ungranted']]);
    first.child.stdin.write('y\n');
    await first.waitErr('module notes: served, now that it is granted');
    // Under --json, a module event as for a background build.
    await first.out.until(() => first.out.text().includes('{"event":"module","name":"notes","state":"served"}\n'), 'the module event');
    assert.deepEqual((await first.index()).map((m) => [m.name, m.state]), [['notes', undefined]]);
  } finally {
    await first.stop();
  }
  assert.equal(statSync(at.grants).mode & 0o777, 0o600);
  const file = JSON.parse(readFileSync(at.grants, 'utf8')) as { grants: { name: string; digest: string }[] };
  assert.deepEqual(file.grants.map((g) => [g.name, g.digest]), [['notes', componentDigest(component)]]);

  const again = await serve(at, []); // stdin is no terminal: nobody to ask
  try {
    assert.deepEqual((await again.index()).map((m) => [m.name, m.state]), [['notes', undefined]]);
    assert.doesNotMatch(again.err.text(), /grant\?/);
  } finally {
    await again.stop();
  }
});

test('no one to ask (no terminal, no --approvals): not served; GET /, the log and its MCP route say which grant is missing and how to give it', { timeout: 180_000 }, async () => {
  const at = place('nobody');
  const s = await serve(at, []);
  try {
    const [entry] = await s.index();
    assert.equal(entry?.state, 'ungranted');
    assert.match(entry!.reason!, /^not granted: it asks for file \(read files under \.\/data\) for component sha256:[0-9a-f]{12}…, and no one is asked \(approvals: deny, or no one to ask\); to grant it: `chatty-gateway plugin grant notes --modules-dir \S+ --approvals-file \S+`/);
    assert.match(s.err.text(), /module not loaded: .*notes: not granted: it asks for file \(read files under \.\/data\)/);
    const refused = await s.mcp();
    assert.equal(refused.status, 403);
    assert.match(refused.body, /Module 'notes' is not served: not granted: .*chatty-gateway plugin grant notes/);
  } finally {
    await s.stop();
  }
  assert.equal(existsSync(at.grants), false);
});

test('chatty-gateway plugin grant NAME, from another terminal, has a waiting serve serve the module', { timeout: 180_000 }, async () => {
  const at = place('later');
  const s = await serve(at, []);
  try {
    assert.equal((await s.index())[0]?.state, 'ungranted');
    const granted = await runCli(['plugin', 'grant', 'notes', '--modules-dir', at.modules, '--approvals-file', at.approvals]);
    assert.equal(granted.code, 0, granted.stderr);
    await s.waitErr('module notes: served, now that it is granted');
    assert.match(s.err.text(), /module notes: granted in the grants file: file \(read files under \.\/data\)/);
    assert.deepEqual((await s.index()).map((m) => [m.name, m.state]), [['notes', undefined]]);
  } finally {
    await s.stop();
  }
});

test('--approvals allow: served for this run, nothing remembered', { timeout: 180_000 }, async () => {
  const at = place('allow');
  const s = await serve(at, ['--approvals', 'allow']);
  try {
    assert.deepEqual((await s.index()).map((m) => [m.name, m.state]), [['notes', undefined]]);
    assert.match(s.err.text(), /module notes: granted for this run \(approvals: allow\), not remembered: file \(read files under \.\/data\)/);
  } finally {
    await s.stop();
  }
  assert.equal(existsSync(at.grants), false);
});

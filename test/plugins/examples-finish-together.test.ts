/**
 * Three gateways of one user starting at once share `~/.cache/chatty-gateway/examples`, and each
 * built every example aside and put it in place by path: `rm <name>` then `rename <name>.tmp-<pid>
 * <name>`. Finishing together, one's rename met the other's fresh copy (ENOTEMPTY), one's rm
 * removed the copy another had just put in place while it walked it (ENOTEMPTY, ENOENT), and the
 * example failed to start. Now a build is put in place by one atomic rename, and one that finds a
 * copy there takes it when it is the same build, or moves it aside first.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-finish-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const CHILD = join(import.meta.dirname, 'examples-gateway-child.ts');

/** A gateway process: resolves once it said `ready`, with a promise of its last word. */
function gateway(args: string[]): Promise<{ done: Promise<string> }> {
  return new Promise((ready, failed) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const done = new Promise<string>((resolve) => child.on('close', (code) => resolve(out.trim().split('\n').at(-1) ?? `exit ${code}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('ready\n')) ready({ done });
    });
    child.on('close', (code) => failed(new Error(`the gateway exited (${code}) before it was ready: ${out}`)));
  });
}

it('three gateways finishing the same examples together each start them', { timeout: 180_000 }, async () => {
  const source = join(scratch, 'examples');
  for (let i = 0; i < 40; i++) {
    const name = `ex${i}`;
    mkdirSync(join(source, name, 'src'), { recursive: true });
    writeFileSync(join(source, name, 'module.toml'), `[module]\nname = "${name}"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n`);
    writeFileSync(join(source, name, 'src', 'index.js'), 'export const plugin = {};');
  }
  const outcomes: string[] = [];
  for (let round = 0; round < 4; round++) {
    const cacheDir = join(scratch, `cache-${round}`);
    const go = join(scratch, `go-${round}`);
    const gateways = await Promise.all([0, 1, 2].map(() => gateway([source, cacheDir, go])));
    writeFileSync(go, '');
    outcomes.push(...(await Promise.all(gateways.map((g) => g.done))));
    // What is left is the examples, each whole: no build aside, nothing moved aside.
    assert.deepEqual(readdirSync(join(cacheDir, 'modules')).sort(), Array.from({ length: 40 }, (_, i) => `ex${i}`).sort());
  }
  assert.deepEqual(outcomes.filter((o) => o !== 'ok'), []);
});

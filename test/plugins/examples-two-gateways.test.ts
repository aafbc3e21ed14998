/**
 * Two gateways of one user starting at once share `~/.cache/chatty-gateway/examples`. Each builds
 * an example aside, in `<name>.tmp-<pid>`, then renames it into place; and each sweeps the cache of
 * what is no example. The sweep took the other gateway's build in progress for a stale entry and
 * removed it: that build then failed (its folder gone under it). A build folder of a process that
 * still runs is now left to it; one whose process is gone is swept as before.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-two-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Stands in for componentize-js (what is tested is the cache's folders, not the component). */
const build = async (dir: string): Promise<void> => writeFileSync(join(dir, 'plugin.wasm'), new Uint8Array([0, 0x61, 0x73, 0x6d]), { mode: 0o644 });

it("another gateway's build in progress is left to it; a dead process's is swept", { timeout: 180_000 }, async () => {
  const source = join(scratch, 'examples');
  mkdirSync(join(source, 'text-tools', 'src'), { recursive: true });
  writeFileSync(join(source, 'text-tools', 'module.toml'), '[module]\nname = "text-tools"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n[protocols]\nmcp = true\n');
  writeFileSync(join(source, 'text-tools', 'src', 'index.js'), 'export const plugin = {};');
  const cacheDir = join(scratch, 'cache');
  const modules = await ensureExamplesBuilt(source, { cacheDir, build });

  // The other gateway: a process that runs, building text-tools aside.
  const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    assert.ok(other.pid !== undefined);
    const inProgress = join(modules, `text-tools.tmp-${other.pid}`);
    mkdirSync(inProgress, { mode: 0o700 });
    writeFileSync(join(inProgress, 'module.toml'), 'half copied');
    // One a process left behind when it died (pid 2^22 + 1 is past Linux's pid_max: no process has it).
    const left = join(modules, `text-tools.tmp-${2 ** 22 + 1}`);
    mkdirSync(left, { mode: 0o700 });
    await ensureExamplesBuilt(source, { cacheDir, build });
    assert.equal(existsSync(inProgress), true, "the other gateway's build in progress was removed");
    assert.equal(existsSync(left), false, "a dead process's build folder was kept");
  } finally {
    other.kill('SIGKILL');
  }
});

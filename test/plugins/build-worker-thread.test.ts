/**
 * `buildPlugin` called in a worker thread (an embedder's build worker) cannot move the working
 * directory, which the build needs: componentize-js shows its engine the working directory as `/`
 * whenever it holds the build's copy, so from `/` (an app launched from the desktop) or a folder
 * above the temp folder it would show the engine the whole disk. It was refused there ('cannot
 * build from the working directory / in a worker thread'). It now builds in a child process of its
 * own, whose main thread moves its working directory. A real componentize-js build.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { newPlugin } from '../../main/plugins/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-build-worker-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

it('builds a plugin from a worker thread whose working directory is / (it cannot move it)', { timeout: 180_000 }, async () => {
  const dir = await newPlugin('from-worker', scratch);
  // The embedder: a process started from `/` that builds in a worker thread. Node 20 gives a worker
  // no module hooks of its parent's, so tsx's require hook loads the TypeScript sources there.
  const worker = join(scratch, 'build-worker.cjs');
  writeFileSync(worker, `const { parentPort, workerData } = require('node:worker_threads');
    require(workerData.tsx).register();
    require(workerData.build).buildPlugin(workerData.dir).then((r) => parentPort.postMessage({ bytes: r.bytes }), (e) => parentPort.postMessage({ failed: String(e && e.message) }));`);
  const workerData = { tsx: fileURLToPath(import.meta.resolve('tsx/cjs/api')), build: fileURLToPath(new URL('../../main/plugins/build/index.ts', import.meta.url)), dir };
  const script = `import { Worker } from 'node:worker_threads';
    const worker = new Worker(${JSON.stringify(worker)}, { workerData: ${JSON.stringify(workerData)} });
    worker.once('message', (m) => { process.stdout.write(JSON.stringify(m)); process.exit(0); });
    worker.once('error', (e) => { process.stdout.write(JSON.stringify({ failed: 'worker: ' + e.message })); process.exit(0); });`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: '/', encoding: 'utf8', timeout: 170_000 });
  assert.equal(run.status, 0, run.stderr);
  const answer = JSON.parse(run.stdout) as { bytes?: number; failed?: string };
  assert.equal(answer.failed, undefined, 'the build in a worker thread was refused or failed');
  assert.ok((answer.bytes ?? 0) > 1_000_000, `a component of ${answer.bytes} bytes`);
  assert.equal(statSync(join(dir, 'plugin.wasm')).size, answer.bytes);
});

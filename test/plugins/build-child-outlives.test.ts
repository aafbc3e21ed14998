/**
 * A build in a child process of its own (`buildInChildProcess`: a worker thread's `buildPlugin`,
 * eb0bb89, `serve --watch`'s rebuilds, the bundled examples behind `serve`) leads its own process
 * group, and was stopped only by its parent's timer, abort signal and `process.once('exit')`. None
 * of them runs when the worker thread that started it is terminated (`worker.terminate()`: a
 * worker's exit handlers never run) or its process exits (a worker's) or is killed (anyone's): the
 * build, and the wizer running the plugin's top-level code, went on after the embedder was gone;
 * one whose top-level code loops, for good. Now the group's leader is a guard that watches a pipe
 * only its parent holds (`build-guard.ts`): the pipe closing, however the parent goes, stops the group.
 *
 * Each case starts a real build of a plugin that loops at its top level, waits until wizer runs
 * it, ends the embedder one way, then looks for every process of the build's group.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, it } from 'node:test';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-build-outlives-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Whether `pid` runs (a zombie is gone: it runs nothing and is reaped by whoever adopted it). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Plain JavaScript the embedder runs: the pids of every process in the groups its own children
 * lead (a build's group: its guard, the build, wizer), from /proc.
 */
const BUILD_GROUPS_JS = `
function buildGroups() {
  const fs = require('node:fs');
  const procs = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync('/proc/' + name + '/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = fs.readFileSync('/proc/' + name + '/cmdline', 'utf8');
      procs.push({ pid: Number(name), state: f[0], ppid: Number(f[1]), pgrp: Number(f[2]), cmd });
    } catch {}
  }
  const leaders = new Set(procs.filter((p) => p.ppid === process.pid).map((p) => p.pid));
  return procs.filter((p) => leaders.has(p.pgrp) && p.state !== 'Z');
}`;

type End = 'terminates the worker' | 'exits' | 'is killed';

/** The embedder's script: starts the build (in a worker thread, or in its main thread with `buildInChildProcess`), reports the build's group once wizer runs the plugin, then ends as `end` says. */
function embedderScript(dir: string, where: 'worker' | 'main', end: End): string {
  const tsxCjs = fileURLToPath(import.meta.resolve('tsx/cjs/api'));
  const build = fileURLToPath(new URL('../../main/plugins/build/index.ts', import.meta.url));
  const workerFile = join(scratch, 'build-worker.cjs');
  // Node 20 gives a worker no module hooks of its parent's: tsx's require hook loads the sources there.
  writeFileSync(workerFile, `const { workerData } = require('node:worker_threads');
    require(workerData.tsx).register();
    require(workerData.build).buildPlugin(workerData.dir).catch(() => undefined);`);
  return `const { createRequire } = require('node:module');
    const { Worker } = require('node:worker_threads');
    ${BUILD_GROUPS_JS}
    let worker;
    if (${JSON.stringify(where)} === 'worker') {
      worker = new Worker(${JSON.stringify(workerFile)}, { workerData: ${JSON.stringify({ tsx: tsxCjs, build, dir })} });
    } else {
      require(${JSON.stringify(tsxCjs)}).register();
      require(${JSON.stringify(build)}).buildInChildProcess(${JSON.stringify(dir)}).catch(() => undefined);
    }
    const started = Date.now();
    const poll = setInterval(async () => {
      const group = buildGroups();
      const wizer = group.some((p) => p.cmd.includes('wizer'));
      if (!wizer && Date.now() - started < 150000) return;
      clearInterval(poll);
      process.stdout.write(JSON.stringify({ wizer, pids: group.map((p) => p.pid) }) + '\\n');
      if (${JSON.stringify(end)} === 'exits') process.exit(0);
      if (${JSON.stringify(end)} === 'is killed') process.kill(process.pid, 'SIGKILL');
      // Terminated, the worker; the embedder lives on and looks itself (a hang guard of 60 s: a looping build never ends).
      await worker.terminate();
      const pids = group.map((p) => p.pid);
      const alive = (pid) => { try { const s = require('node:fs').readFileSync('/proc/' + pid + '/stat', 'utf8'); return s.slice(s.lastIndexOf(')') + 2)[0] !== 'Z'; } catch { return false; } };
      const until = Date.now() + 60000;
      while (pids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      process.stdout.write(JSON.stringify({ leftWhileEmbedderLives: pids.filter(alive) }) + '\\n');
      process.exit(0);
    }, 200);`;
}

function loopingPlugin(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), `[module]\nname = "looping"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n`);
  writeFileSync(join(dir, 'src', 'plugin.js'), 'for (;;) {}\nexport const plugin = {};\n');
  return dir;
}

const cases: { where: 'worker' | 'main'; end: End }[] = [
  { where: 'worker', end: 'terminates the worker' },
  { where: 'worker', end: 'exits' },
  { where: 'worker', end: 'is killed' },
  { where: 'main', end: 'is killed' },
];

for (const { where, end } of cases) {
  it(`a build started in ${where === 'worker' ? 'a worker thread' : 'the main thread'} is stopped, its whole group, when the embedder ${end}`, { timeout: 180_000 }, async () => {
    const dir = loopingPlugin(`${where}-${end.replace(/ /g, '-')}`);
    let pids: number[] = [];
    try {
      const embedder = spawnSync(process.execPath, ['-e', embedderScript(dir, where, end)], { encoding: 'utf8', timeout: 170_000 });
      const lines = embedder.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { wizer?: boolean; pids?: number[]; leftWhileEmbedderLives?: number[] });
      const seen = lines[0];
      assert.ok(seen !== undefined, `the embedder reported nothing: ${embedder.stderr}`);
      pids = seen.pids ?? [];
      assert.equal(seen.wizer, true, `wizer never ran the plugin: ${embedder.stderr}`);
      if (end === 'terminates the worker') {
        assert.equal(embedder.status, 0, embedder.stderr);
        assert.deepEqual(lines[1]?.leftWhileEmbedderLives, [], 'the build was left running after its worker thread was terminated');
        return;
      }
      if (end === 'is killed') assert.equal(embedder.signal, 'SIGKILL');
      else assert.equal(embedder.status, 0, embedder.stderr);
      // A hang guard, not a race: a looping build left behind never ends.
      for (let i = 0; i < 600 && pids.some(running); i++) await delay(100);
      assert.deepEqual(pids.filter(running), [], `the build's group was left running after its embedder ${end}`);
    } finally {
      for (const pid of pids.filter(running)) {
        try {
          process.kill(pid, 'SIGKILL'); // a process of the build this test started
        } catch {
          // gone
        }
      }
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    }
  });
}

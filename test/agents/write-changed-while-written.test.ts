/**
 * A write replaces only the file its approval's diff stat was counted against, up to its very
 * rename. The old file is judged before the approved content is written beside it, and writing and
 * syncing it takes a while (64 MiB here; a few MiB take milliseconds): a file another worker of a
 * shared `directory` workspace put there meanwhile was replaced, its content lost to a write the
 * person approved against another file. A real writing process, stopped (SIGSTOP) once its hidden
 * file is made and before its content is in it, while the file is changed; then let go on.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { on, once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));
const SIZE = 64 * 1024 * 1024;
const UNSEEN = "another worker's file, which the person was never shown\n";

/** A process that plans a write of notes.txt (the diff stat counted), then commits it at once; prints how it ended. */
function writer(ws: string, state: string): ChildProcess {
  const script = `
    const { commitWrite, planWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    const ws = ${JSON.stringify(ws)};
    await pinWorkspace(ws);
    const plan = await planWrite(ws, 'notes.txt', 'x'.repeat(${SIZE - 1}));
    await commitWrite(ws, plan).then(() => console.log('written (' + plan.diffStat + ')'), (err) => console.log(err.name + ': ' + err.message));`;
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, XDG_STATE_HOME: state } });
}

/** Resolves once every thread of `pid` is stopped: a SIGSTOP is only sent when `kill` returns. */
async function stopped(pid: number): Promise<void> {
  const state = (task: string): string => {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  };
  while (!readdirSync(`/proc/${pid}/task`).every((task) => ['T', 't'].includes(state(task)))) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Starts the writer; once its hidden file is made, stops it and, if the file is still empty (its
 * content not yet written, so the write is before its last look), calls `change`; then lets it go
 * on. Returns whether `change` was called and what the writer printed. Tried again (up to 5 times)
 * while the stop came after the content was written.
 */
async function changedMidWrite(ws: string, state: string, reset: () => void, change: () => void): Promise<{ changed: boolean; said: string }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    reset();
    const watcher = watch(ws);
    const child = writer(ws, state);
    let said = '';
    child.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const ended = new AbortController(); // a writer ending before it made its file fails the test, never hangs it
    child.once('exit', () => ended.abort(new Error(`the writer ended before it made its hidden file: ${said}`)));
    let hidden = '';
    for await (const [, name] of on(watcher, 'change', { signal: ended.signal })) {
      if (String(name).startsWith('.notes.txt.chatty-write-')) {
        hidden = String(name);
        break;
      }
    }
    watcher.close();
    child.kill('SIGSTOP');
    await stopped(child.pid!);
    const empty = existsSync(join(ws, hidden)) && statSync(join(ws, hidden)).size === 0;
    if (empty) change();
    child.kill('SIGCONT');
    const [code] = child.exitCode !== null ? [child.exitCode] : await once(child, 'exit');
    assert.equal(code, 0);
    if (empty) return { changed: true, said: said.trim() };
  }
  throw new Error('no SIGSTOP landed before the content was written');
}

/** A workspace `ws` in a fresh folder `home`, the writers' state folder, and the file written. */
function scene(prefix: string): { home: string; ws: string; state: string; file: string } {
  const home = tempDir(prefix);
  mkdirSync(join(home, 'ws'));
  return { home, ws: join(home, 'ws'), state: join(home, 'state'), file: join(home, 'ws', 'notes.txt') };
}

/** `file` as it is before a try: `before`'s content, or none. */
function resetTo(file: string, before: string | undefined): void {
  rmSync(file, { force: true });
  if (before !== undefined) writeFileSync(file, before);
}

const REFUSED = 'WorkspaceRefusal: "notes.txt" was changed after the person was asked to approve this write (made, replaced, edited or removed since its diff stat was counted): nothing was written';

const cases: { what: string; before: string | undefined; change: (file: string) => void }[] = [
  {
    what: 'replaced by another file',
    before: 'old\n',
    change: (file) => {
      writeFileSync(`${file}.other`, UNSEEN);
      renameSync(`${file}.other`, file);
    },
  },
  { what: 'made where there was none', before: undefined, change: (file) => writeFileSync(file, UNSEEN) },
];

for (const { what, before, change } of cases) {
  test(`a file ${what} while the approved content is written beside it is not replaced: the write is refused, nothing written`, { timeout: 180_000 }, async () => {
    // Before: judged before the content was written, the file put there meanwhile was replaced ('written (+1 -1)').
    const { home, ws, state, file } = scene('chatty-write-while-written-');
    try {
      const { said } = await changedMidWrite(ws, state, () => resetTo(file, before), () => change(file));
      assert.equal(said, REFUSED);
      const now = readFileSync(file, 'utf8');
      assert.ok(now === UNSEEN, `notes.txt is not the other worker's file but ${now.length} bytes`);
      assert.deepEqual(readdirSync(ws), ['notes.txt'], 'its hidden file is removed');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
}

test('a file left as it was while the content is written is replaced (an old file, then a new one)', { timeout: 180_000 }, async () => {
  const { home, ws, state, file } = scene('chatty-write-while-written-kept-');
  try {
    for (const before of ['old\n', undefined]) {
      const { said } = await changedMidWrite(ws, state, () => resetTo(file, before), () => {});
      assert.equal(said, `written (+1 -${before === undefined ? 0 : 1})`);
      assert.equal(statSync(file).size, SIZE);
      assert.equal(statSync(file).nlink, 1);
      assert.deepEqual(readdirSync(ws), ['notes.txt']);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

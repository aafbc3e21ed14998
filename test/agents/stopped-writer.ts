/**
 * Run by write-temporaries-left.test.ts as a process of its own (`node --import tsx stopped-writer.ts
 * <json>`), so that it can be started inside a pid namespace with its writers: a writer of `live.txt`
 * (64 MiB) SIGSTOPped as soon as its hidden file is made, then one write of `other.txt` into the same
 * folder by a process started under `nextUnder` (a command prefix: `unshare --time …`), then the live
 * writer let go on. Prints one JSON line: whether its hidden file was there before and after the other
 * write, and how each write ended.
 */
import { spawn, spawnSync } from 'node:child_process';
import { on, once } from 'node:events';
import { readdirSync, watch } from 'node:fs';
import { writerArgs } from './writer-args.js';

const { ws, nextUnder } = JSON.parse(process.argv[2]!) as { ws: string; nextUnder: string[] };

const watcher = watch(ws);
const live = spawn(process.execPath, writerArgs(ws, 'live.txt', 64 * 1024 * 1024), { stdio: ['ignore', 'inherit', 'inherit'] });
const ended = new AbortController(); // a writer ending before it made its file ends this, never hangs it
live.once('exit', () => ended.abort(new Error('the live writer ended before it made its hidden file')));
let hidden = '';
for await (const [, name] of on(watcher, 'change', { signal: ended.signal })) {
  if (String(name).startsWith('.live.txt.chatty-write-')) {
    hidden = String(name);
    break;
  }
}
live.kill('SIGSTOP');
watcher.close();
const before = readdirSync(ws).includes(hidden);
const [command, ...rest] = [...nextUnder, process.execPath, ...writerArgs(ws, 'other.txt', 3)];
const next = spawnSync(command!, rest, { stdio: ['ignore', 'inherit', 'inherit'] });
const after = readdirSync(ws).includes(hidden);
live.kill('SIGCONT');
const [liveCode] = live.exitCode !== null ? [live.exitCode] : await once(live, 'exit');
console.log(JSON.stringify({ before, after, next: next.status, live: liveCode }));

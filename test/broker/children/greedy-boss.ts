/**
 * A hostile virtual agent's worker: says hello, makes CHATTY_BOSS_CALLS agent.invoke calls to
 * CHATTY_BOSS_CALLEE in one write (prompt CHATTY_BOSS_PROMPT), reads their progress until each
 * call has streamed its text, been answered or been refused, then stops reading for good and
 * writes <CHATTY_BOSS_MARKS>/<pid>. Its task is never answered: it lives (holding its slot) until ended.
 *
 * Calls are counted by id, once each: a call can bring both a `Text` and an answer (a callee's
 * answer that fails after its text), and counting lines stopped the reading before a late
 * callee's text, which then waited for room for ever (its call never answered).
 */
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'boss', description: 'stops reading', version: '1.0.0', skills: [] } }));
const calls = Number(process.env['CHATTY_BOSS_CALLS']);
const params = { agent: process.env['CHATTY_BOSS_CALLEE'], prompt: process.env['CHATTY_BOSS_PROMPT'] };
const FIRST = 100;
let asked = false;
/** The calls that have streamed their text or been answered (a result or an error). */
const done = new Set<number>();
let tail = '';
// Only a line's start is looked at (it names the call before the text): `{"v":3,"id":N,"result"…`,
// `{"v":3,"id":N,"error"…`, `…"req.progress","params":{"id":N,"event":{"Text"…`. A line's start
// may be looked at again as more of it arrives: the set counts a call once.
const look = (head: string): void => {
  if (!head.includes('"Text":') && !head.includes('"error":') && !head.includes('"result":')) return;
  const id = Number(/"id":(\d+)/.exec(head)?.[1]);
  if (id >= FIRST && id < FIRST + calls) done.add(id);
};
socket.on('data', (chunk: Buffer) => {
  if (!asked) {
    asked = true;
    socket.write(Array.from({ length: calls }, (_, i) => frame(FIRST + i, 'agent.invoke', params)).join(''));
  }
  const lines = (tail + chunk.toString('latin1')).split('\n');
  tail = lines.pop()!.slice(0, 200);
  for (const line of lines) look(line.slice(0, 200));
  look(tail);
  if (done.size < calls) return;
  socket.pause();
  socket.removeAllListeners('data');
  writeFileSync(join(process.env['CHATTY_BOSS_MARKS']!, String(process.pid)), 'deaf');
});
setInterval(() => {}, 1 << 30);

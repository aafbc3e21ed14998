/**
 * A hostile virtual agent's worker: says hello, makes CHATTY_BOSS_CALLS agent.invoke calls to
 * CHATTY_BOSS_CALLEE in one write (prompt CHATTY_BOSS_PROMPT), reads their progress until each
 * call has streamed its text or been refused, then stops reading for good and writes
 * <CHATTY_BOSS_MARKS>/<pid>. Its task is never answered: it lives (holding its slot) until ended.
 */
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';

const socket = new Socket({ fd: 3, readable: true, writable: true });
const frame = (id: number, method: string, params: unknown): string => JSON.stringify({ v: 3, id, method, params }) + '\n';
socket.write(frame(1, 'session.hello', { card: { name: 'boss', description: 'stops reading', version: '1.0.0', skills: [] } }));
const calls = Number(process.env['CHATTY_BOSS_CALLS']);
const params = { agent: process.env['CHATTY_BOSS_CALLEE'], prompt: process.env['CHATTY_BOSS_PROMPT'] };
let asked = false;
let seen = 0;
let tail = '';
socket.on('data', (chunk: Buffer) => {
  if (!asked) {
    asked = true;
    socket.write(Array.from({ length: calls }, (_, i) => frame(100 + i, 'agent.invoke', params)).join(''));
  }
  // Only each line's start matters: the marker is near it.
  const lines = (tail + chunk.toString('latin1')).split('\n');
  tail = lines.pop()!.slice(0, 200);
  for (const line of lines) if (line.includes('"Text":') || line.includes('"error":')) seen++;
  if (tail.includes('"Text":')) { seen++; tail = ''; }
  if (seen < calls) return;
  socket.pause();
  socket.removeAllListeners('data');
  writeFileSync(join(process.env['CHATTY_BOSS_MARKS']!, String(process.pid)), 'deaf');
});
setInterval(() => {}, 1 << 30);

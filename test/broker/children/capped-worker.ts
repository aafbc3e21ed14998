/**
 * A worker that reads its connection with a frame cap of its own (CHATTY_TEST_MAX_FRAME bytes,
 * default the wire's), through the same codec every worker uses: a line over it closes the
 * connection, as it would for any worker, and the process exits. Serves tasks one after the other:
 * a task whose text is `{"invoke":{"to":…,"bytes":n}}` calls `to` with a prompt of n `x`s and ends
 * with the broker's answer (result or error) as its text; any other task ends with
 * `got <n> characters` as its text.
 */
import { FrameCodec } from '../../../main/fabric/codec/index.js';
import type { BrokerMessage } from '../../../main/fabric/wire/broker-to-worker.js';
import { openParticipantFd } from '../../../main/worker/index.js';

const cap = process.env['CHATTY_TEST_MAX_FRAME'];
const codec = FrameCodec.forWorker(cap ? { maxFrameBytes: Number(cap) } : {});
const socket = openParticipantFd();
const write = (line: string): void => void socket.write(`${line}\n`);
/** Our agent.invoke id → the task.run it was made for. */
const invokes = new Map<number, number>();

const card = { name: 'ignored', description: 'reads with a frame cap of its own', version: '1.0.0', skills: [] };
write(codec.request({ method: 'session.hello', params: { card } }).line);

function finish(taskId: number, text: string): void {
  write(codec.notify({ method: 'task.event', params: { id: taskId, kind: 'artifact', text, lastChunk: true } }));
  write(codec.respond(taskId, { state: 'completed' }));
}

function onTask(frame: Extract<BrokerMessage, { method: 'task.run' }>): void {
  let plan: { invoke?: { to: string; bytes: number } } = {};
  try {
    plan = JSON.parse(frame.params.text) as typeof plan;
  } catch {
    // not a plan: a task to count
  }
  if (!plan.invoke) return finish(frame.id, `got ${frame.params.text.length} characters`);
  const prompt = 'x'.repeat(plan.invoke.bytes);
  const { id, line } = codec.request({ method: 'agent.invoke', params: { agent: plan.invoke.to, prompt, handle: null, include_trace: false } });
  invokes.set(id, frame.id);
  write(line);
}

socket.on('data', (chunk: Buffer) => {
  for (const incoming of codec.push(chunk)) {
    if (incoming.type === 'close') {
      console.error(`capped-worker: closing: ${incoming.reason}`);
      socket.destroy();
      process.exit(0);
    }
    if (incoming.type === 'result' || incoming.type === 'error') {
      const taskId = invokes.get(incoming.frame.id);
      invokes.delete(incoming.frame.id);
      const answer = incoming.type === 'result' ? { result: incoming.frame.result } : { error: incoming.frame.error };
      if (taskId !== undefined) finish(taskId, JSON.stringify(answer));
    }
    if (incoming.type === 'message' && incoming.frame.method === 'task.run') onTask(incoming.frame);
  }
});
socket.on('end', () => process.exit(0));
socket.on('error', () => process.exit(0));

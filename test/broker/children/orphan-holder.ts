/**
 * A hostile worker for test/broker/hostile-orphan.test.ts: once its task has come, it starts a
 * process of its own in a session of its own (out of its process group: the broker's signals to
 * the worker's group miss it) that holds fd 3, its connection, then exits without answering the
 * task. The process's pid is written to argv[2] (the test ends it). With argv[3] `answer` it
 * answers the task first (`completed`, text "done"), as an honest worker that leaves a helper
 * running would. With argv[3] `calls` and argv[4] N, it writes N agent.list calls straight to fd 3
 * just before it exits: nobody reads their answers (the holder reads nothing), so the broker's
 * queue to this connection fills and its reading is paused for its own answers.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { connectWorker } from '../../../main/worker/index.js';
import { writeAll } from '../../fabric/children/write-all.js';

const { session } = await connectWorker({ name: 'orphan-holder', description: 'leaves its connection to a process of its own', version: '1.0.0', skills: [] });
const task = await session.nextTask();
if (task) {
  const holder = spawn('sleep', ['30'], { detached: true, stdio: ['ignore', 'ignore', 'ignore', 3] });
  writeFileSync(process.argv[2]!, String(holder.pid));
  holder.unref();
  session.event({ id: task.id, kind: 'status', state: 'working', message: 'holder started' });
  if (process.argv[3] === 'answer') {
    session.event({ id: task.id, kind: 'artifact', text: 'done' });
    session.finish(task.id, { state: 'completed' });
  }
  if (process.argv[3] === 'calls') {
    const count = Number(process.argv[4]);
    const bytes = Buffer.from(Array.from({ length: count }, (_, i) => `{"v":3,"id":${100_000 + i},"method":"agent.list"}\n`).join(''));
    writeAll(3, bytes);
  }
}
// Exits with the holder keeping fd 3 open: the broker sees no end of the connection.
setImmediate(() => process.exit(0));

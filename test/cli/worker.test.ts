/**
 * `chatty-gateway worker` through the real bin: its refusals (fd 3 not a socket, a refused hello,
 * no answer to the hello), each one stderr line and a non-zero exit, and its usage errors (exit 2). Its
 * normal run (hello, one task, one outcome) is test/agents/scripted.test.ts, through a broker.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { withParticipantSocket, SHARED_SOCKET_REFUSAL } from '../../main/fabric/index.js';
import { tempDir } from '../agents/helpers.js';
import { collect, runCli } from '../helpers/cli.js';

const BIN = fileURLToPath(new URL('../../main/cli/bin.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');
const home = tempDir('chatty-worker-cli-');
after(() => rmSync(home, { recursive: true, force: true }));

/** The worker with `fd3` as its descriptor 3; what it printed and its exit code. */
async function worker(fd3: number | Socket, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX, BIN, 'worker', '--participant-fd', '3', ...args], { cwd: home, stdio: ['ignore', 'pipe', 'pipe', fd3] });
  const [stdout, stderr, code] = await Promise.all([
    collect(child.stdout!),
    collect(child.stderr!),
    new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c))),
  ]);
  return { code, stdout, stderr };
}

function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, stderr);
  return lines[0]!;
}

test('fd 3 a file: one line saying so, exit 1', async () => {
  const file = join(home, 'not-a-socket.txt');
  writeFileSync(file, 'hello\n');
  const fd = openSync(file, 'r');
  try {
    const result = await worker(fd);
    assert.equal(result.code, 1);
    assert.equal(oneLine(result.stderr), 'chatty-gateway worker: fd 3 is a file, not a socket; this command is started by a broker (a LocalRunner), with its end of a socketpair at fd 3');
  } finally {
    closeSync(fd);
  }
});

test('no fd 3 from a broker (run by hand): one line saying fd 3 is not a socket, exit 1', async () => {
  const result = await runCli(['worker'], { cwd: home });
  assert.equal(result.code, 1);
  assert.match(oneLine(result.stderr), /^chatty-gateway worker: fd 3 is (not open|.+, not a socket); this command is started by a broker/);
});

test('a refused hello: one line with the broker\'s reason, exit 1', async () => {
  // The worker's process starts after the connection is made: on a loaded CI machine that took
  // longer than the socket's default 5 s for a first line, which then closed the connection
  // unanswered (EPIPE on the hello). The hello is what is tested here, not that timeout.
  const shared = await withParticipantSocket(home, { helloTimeoutMs: 120_000 });
  const socket = new Socket();
  await new Promise<void>((resolve, reject) => socket.connect(shared.path, resolve).once('error', reject));
  try {
    const result = await worker(socket);
    assert.equal(result.code, 1);
    assert.equal(oneLine(result.stderr), `chatty-gateway worker: the broker refused the hello: refused: ${SHARED_SOCKET_REFUSAL}`);
  } finally {
    socket.destroy();
    await shared.close();
  }
});

test('the connection closes with no answer to the hello: one line, exit 1', async () => {
  const path = join(home, 'closing.sock');
  const server = createServer((conn) => conn.once('data', () => conn.destroy()));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const socket = new Socket();
  await new Promise<void>((resolve, reject) => socket.connect(path, resolve).once('error', reject));
  try {
    const result = await worker(socket);
    assert.equal(result.code, 1);
    assert.match(oneLine(result.stderr), /^chatty-gateway worker: no answer to the hello: disconnected: /);
  } finally {
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('an unknown --agent kind: a usage error naming the kinds there are, with the usage line, exit 2', async () => {
  const result = await runCli(['worker', '--agent', 'frobnicate'], { cwd: home });
  assert.equal(result.code, 2, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^chatty-gateway: option '--agent <kind>' argument 'frobnicate' is invalid\. Allowed choices are scripted, llm\.\nusage: chatty-gateway worker \[options\]\n/);
});

test('--participant-fd that is not a number: a usage error, exit 2', async () => {
  const result = await runCli(['worker', '--participant-fd', 'three'], { cwd: home });
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^chatty-gateway: option '--participant-fd <fd>' argument 'three' is invalid\. a descriptor is a number, e\.g\. 3\nusage: chatty-gateway worker \[options\]\n/);
});

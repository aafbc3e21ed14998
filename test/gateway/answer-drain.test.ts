/**
 * The write deadline: Node has no write timeout, so a client that sent a call and then stopped
 * reading its 1 MiB answer, or read it one byte at a time, held the answer's memory and its
 * connection slot for as long as it liked (days). Now a connection with bytes written and not
 * taken must take 64 KiB of them (or all, if fewer) each window, else it is closed; here the
 * window is 500 ms. A client that reads, the official SDK client, is untouched.
 */
import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type { CallableModule } from '../../main/gateway/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { connectClient } from '../mcp/helpers.js';

const ANSWER_CHARS = 1024 * 1024;
/** A plain JS module whose one tool answers 1 MiB of text. */
const big: CallableModule = {
  name: 'big', version: '1.0.0', description: '', protocols: { mcp: true, a2a: false },
  listTools: async () => [],
  invokeTool: async () => ({ ok: true, value: { content: 'x'.repeat(ANSWER_CHARS) } }),
};
let gw: RunningGateway;
before(async () => {
  gw = await startGateway({ list: () => [big], get: (name) => (name === 'big' ? big : undefined) }, { connectionLimits: { answerDrainWindowMs: 500 } });
});
after(() => gw.close());

function callOn(socket: Socket): void {
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'mib', arguments: {} } });
  socket.write(
    `POST /mcp/big HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${gw.auth.authorization}\r\nAccept: application/json, text/event-stream\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`,
  );
}

/**
 * True once the gateway holds nothing unsent, false when it still holds bytes after `boundMs` (a
 * hang guard, 120 windows). With a client that has read less than the kernel's buffer of a 1 MiB
 * answer, holding nothing means the gateway closed the connection.
 */
async function gatewayLetGoWithin(boundMs = 60_000): Promise<boolean> {
  const until = Date.now() + boundMs;
  while (gw.gateway.unsentBytes > 0) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Reads what is left on `socket` until it closes: how many bytes came. */
function readToClose(socket: Socket): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
    socket.once('close', () => resolve(bytes));
    socket.resume();
  });
}

test('a client that stops reading its 1 MiB answer is closed within two windows, and what it held goes', { timeout: 180_000 }, async () => {
  const socket = createConnection(gw.socketPath);
  socket.on('error', () => {});
  socket.pause(); // reads nothing until the gateway has let go
  try {
    callOn(socket);
    while (gw.gateway.unsentBytes === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await gatewayLetGoWithin(), true, `the gateway still holds ${gw.gateway.unsentBytes} bytes for a client that stopped reading`);
    // Cut: what the kernel held comes, then the close, never the whole answer.
    assert.ok((await readToClose(socket)) < ANSWER_CHARS);
  } finally {
    socket.destroy();
  }
});

test('a client that reads its answer one byte at a time is closed too', { timeout: 180_000 }, async () => {
  let bytes = 0;
  // One byte a read (a 1-byte buffer), one read every 50 ms: far under 64 KiB a window.
  const socket = createConnection({
    path: gw.socketPath,
    onread: {
      buffer: Buffer.alloc(1),
      callback: (n: number) => {
        bytes += n;
        setTimeout(() => {
          if (!socket.destroyed) socket.resume();
        }, 50);
        return false; // stop reading until the timer resumes it
      },
    },
  });
  socket.on('error', () => {});
  try {
    callOn(socket);
    while (bytes === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await gatewayLetGoWithin(), true, `the gateway still holds ${gw.gateway.unsentBytes} bytes for a client reading a byte at a time (${bytes} read)`);
    assert.ok(bytes < ANSWER_CHARS);
  } finally {
    socket.destroy();
  }
});

test('the official SDK client, which reads, gets every 1 MiB answer', { timeout: 180_000 }, async () => {
  const { client, close } = await connectClient(gw, 'big', 'streamable');
  try {
    for (let i = 0; i < 4; i++) {
      const result = await client.callTool({ name: 'mib', arguments: {} });
      const content = result.content as { type: string; text: string }[];
      assert.equal(content[0]?.text.length, ANSWER_CHARS);
    }
  } finally {
    await close();
  }
});

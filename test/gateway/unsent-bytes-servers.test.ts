/**
 * The unsent-bytes ledger follows responses two ways: the gateway's own server is made with its
 * `ServerResponse` subclass (`UnsentBytes.Response`), and an embedder's own listener for
 * `buildRouter()` is followed by the ledger's middleware, which wraps each response. Both must
 * hold all connections together under the cap by closing the one gone longest without reading.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { once } from 'node:events';
import { test } from 'node:test';
import Koa from 'koa';
import { UnsentBytes } from '../../main/gateway/unsent/unsent-bytes.js';
import { tempDir } from '../helpers/gateway.js';

const CAP = 6 * 1024 * 1024;
const ANSWER = Buffer.alloc(4 * 1024 * 1024, 'x');

/** A connection that asks for the answer and reads nothing: resolves when the server has written it. */
async function unreadRequest(socketPath: string, answered: Promise<unknown>): Promise<Socket> {
  const socket = createConnection(socketPath);
  socket.pause();
  socket.on('error', () => {});
  socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await answered;
  return socket;
}

async function holdsUnderCap(serve: (ledger: UnsentBytes, onWritten: () => void) => Server): Promise<void> {
  const dir = tempDir('unsent-servers-');
  const socketPath = join(dir.path, 's.sock');
  const ledger = new UnsentBytes(CAP);
  let written: () => void = () => {};
  const server = serve(ledger, () => written());
  server.listen(socketPath);
  await once(server, 'listening');
  try {
    const first = await unreadRequest(socketPath, new Promise<void>((resolve) => (written = resolve)));
    assert.ok(ledger.bytes > 2 * 1024 * 1024, `the first answer is held (${ledger.bytes} bytes)`);
    const second = await unreadRequest(socketPath, new Promise<void>((resolve) => (written = resolve)));
    // The connection gone longest without reading made room: closed before its answer was whole.
    let received = 0;
    first.on('data', (chunk: Buffer) => (received += chunk.length));
    first.resume();
    await once(first, 'close');
    assert.ok(received < ANSWER.length, `the first connection got ${received} bytes`);
    assert.ok(!second.destroyed, 'the newer connection is kept');
    assert.ok(ledger.bytes <= CAP + ANSWER.length, `held ${ledger.bytes}`);
    second.destroy();
  } finally {
    server.closeAllConnections();
    server.close();
    dir.remove();
  }
}

test('a server made with UnsentBytes.Response holds every connection under the cap', { timeout: 180_000 }, async () => {
  await holdsUnderCap((ledger, onWritten) =>
    createServer({ ServerResponse: ledger.Response }, (_req: IncomingMessage, res: ServerResponse) => {
      res.end(ANSWER);
      onWritten();
    }),
  );
});

test("an embedder's own server, followed by the ledger's middleware, holds every connection under the cap", { timeout: 180_000 }, async () => {
  await holdsUnderCap((ledger, onWritten) => {
    const app = new Koa();
    app.use(ledger.middleware());
    app.use((ctx) => {
      ctx.respond = false;
      ctx.res.end(ANSWER);
      onWritten();
    });
    return createServer(app.callback());
  });
});

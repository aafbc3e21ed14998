import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipelinedRefusal } from './queued-responses.js';
import { responseOn } from './response-on-socket.js';

/**
 * The server's 'checkExpectation' listener: a request whose `Expect` is not `100-continue` is
 * answered 417, as Node does, but under the rules for a request pipelined behind another
 * (`pipelinedRefusal`: past them its connection is closed). Without a listener Node answers it
 * itself and never emits 'request', so such requests never reached the guards: a client without
 * the token that pipelined `Expect: x` requests and read nothing had Node read on until their
 * queued answers passed 16 KiB, and to the end of that read: ~2,260 requests and answers held on
 * one connection (4.4 MB of heap) until the write deadline, uncounted.
 */
export function answerUnknownExpectation(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  if (socket.destroyed) return; // read after its connection was closed: nobody to answer
  const ahead = responseOn(socket);
  if (ahead !== undefined && ahead !== res && pipelinedRefusal(ahead, res, socket) !== undefined) {
    socket.destroy();
    return;
  }
  res.writeHead(417);
  res.end();
}

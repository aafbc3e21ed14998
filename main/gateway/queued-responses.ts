import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { isSessionStream } from './session-streams.js';

/**
 * Requests one connection may have unanswered at once: the one on the socket and those pipelined
 * behind it (HTTP/1.1). Node reads and runs every pipelined request at once, whatever is still
 * running ahead of it, and reads on until what they have written passes 16 KiB, which calls still
 * running never do: before, one connection ran any number of calls (20,000 took 326 MB of the
 * main process), and a client without the token that wrote 64 KiB of `GET /` and read nothing
 * held 3,600 requests and their Koa contexts (21 MB, the unsent-bytes ledger counting the 1 MB of
 * their answers) until the write deadline. No client we know pipelines (the SDK's fetch, Node's
 * agent, curl): 16 leaves room for one that does.
 */
export const MAX_REQUESTS_ON_A_CONNECTION = 16;

/**
 * What the heads of the requests queued behind the one on a connection may cost together (their
 * request lines, header lines and trailers as Node read them, and `HEADER_FIELD_COST` a field:
 * `headCost`). A queued request holds its head, its Koa context and its answer until every request
 * before it is answered, and the guards see it before its token is checked. 15 requests queued
 * behind a call still running held ~240 KB a connection with heads of one 16 KB header (Node's
 * head limit is 16 KiB), and ~1.4 MB with heads of ~2,000 small headers (Node keeps up to 2,000):
 * ~740 MB at the connection cap. 32 KiB is two heads of one 16 KB header; the heads of 15
 * pipelined calls of any client we know take a few KiB.
 */
export const MAX_QUEUED_HEAD_BYTES = 32 * 1024;
/** The heap a header field takes held beyond its text (its two strings, their slots, the headers object's entry): ~40 bytes, measured. */
const HEADER_FIELD_COST = 40;

/** Why a request pipelined behind another is not run: its connection is closed (the status and reason of its row). */
export interface PipelinedRefusal {
  readonly status: number;
  readonly reason: string;
}

const BEHIND_SESSION_STREAM: PipelinedRefusal = {
  status: 400,
  reason: 'a request pipelined behind an SSE stream on its connection can never be answered; the connection was closed',
};
const TOO_MANY_UNANSWERED: PipelinedRefusal = {
  status: 429,
  reason: `more than ${MAX_REQUESTS_ON_A_CONNECTION} requests pipelined unanswered on one connection; the connection was closed`,
};
const HEADS_TOO_LARGE: PipelinedRefusal = {
  status: 431,
  reason: `more than ${MAX_QUEUED_HEAD_BYTES / 1024} KiB of request heads pipelined unanswered on one connection; the connection was closed`,
};

/**
 * For `res`, read while `ahead` is on its connection `socket`: undefined when it may run (it is
 * then noted, `queuedBehind`), else why not, and the caller closes the connection. Nothing may
 * follow a legacy SSE stream (it ends only with its connection, so the answer could never be
 * sent: before, such answers were held unsendable for as long as the client read its stream), and
 * at most `MAX_REQUESTS_ON_A_CONNECTION` may be unanswered, the heads of those queued costing at
 * most `MAX_QUEUED_HEAD_BYTES`. Asked of every request Node reads
 * behind another: those the guards see, and those Node would answer itself (`unknown-expectation.ts`).
 */
export function pipelinedRefusal(ahead: ServerResponse, res: ServerResponse, socket: Socket): PipelinedRefusal | undefined {
  if (isSessionStream(ahead)) return BEHIND_SESSION_STREAM;
  return queuedBehind(res, socket);
}

/**
 * Responses queued behind the one on their connection (HTTP pipelining), by connection. Node tells
 * only the response on the socket that its connection closed (its 'close'); one queued behind it
 * never learns, so before, its call ran on (outside any connection slot), its body stayed held
 * among the bodies, and the answer it wrote was held by the unsent-bytes ledger for good.
 */
const queuedOn = new WeakMap<Socket, Set<ServerResponse>>();

/**
 * Called for a response queued behind another on `socket`: when the connection closes before it
 * reached the socket, it is told as Node tells the one on the socket (destroyed, then 'close'),
 * so its route cancels what it runs and writes nothing more. One 'close' listener a connection,
 * and one a queued response (`forgetQueued`, one function for all).
 * A refusal, and nothing noted, when the connection already has `MAX_REQUESTS_ON_A_CONNECTION`
 * unanswered, or the heads queued would cost more than `MAX_QUEUED_HEAD_BYTES` with this one's:
 * the caller closes it (and so tells the ones before).
 */
function queuedBehind(res: ServerResponse, socket: Socket): PipelinedRefusal | undefined {
  let queued = queuedOn.get(socket);
  if (queued === undefined) {
    const responses = new Set<ServerResponse>();
    queuedOn.set(socket, responses);
    socket.once('close', () => {
      // One that reached the socket is Node's to tell (and a finished one was told already).
      for (const each of responses) if (each.socket === null && !each.destroyed) closeQueued(each);
      responses.clear();
    });
    queued = responses;
  }
  // Finished (Node marks it destroyed at its 'close'), or since reached the socket: then it is the
  // one on it, Node's to tell at the close. Before, that one stayed counted here too, so once one
  // answer had gone, a client keeping 16 unanswered was closed at its 16th.
  for (const each of queued) if (each.destroyed || each.socket !== null) queued.delete(each);
  // The one on the socket, those queued, and this one.
  if (queued.size + 2 > MAX_REQUESTS_ON_A_CONNECTION) return TOO_MANY_UNANSWERED;
  let heads = headCost(res.req);
  for (const each of queued) heads += headCost(each.req);
  if (heads > MAX_QUEUED_HEAD_BYTES) return HEADS_TOO_LARGE;
  queued.add(res);
  res.on('close', forgetQueued); // on(): 'close' comes once, and once() would wrap it
  return undefined;
}

/**
 * What a request's head costs held: its request line and header lines, its trailers (a chunked
 * body's closing header lines: Node keeps up to 2,000 fields more, within 16 KiB of their own, with
 * the request), and `HEADER_FIELD_COST` a field. Before, trailers were not counted: 14 requests
 * queued behind a call, each a small head and 1,800 trailer fields, held ~760 KiB a connection
 * where heads alone are held to ~100 KiB. A request's trailers are whole before the next request
 * on its connection is read, so only the last one's are not counted yet (as the head on the socket).
 */
function headCost(req: IncomingMessage): number {
  const raw = req.rawHeaders;
  const trailers = req.rawTrailers;
  let cost = (req.method?.length ?? 0) + (req.url?.length ?? 0) + 11 + ((raw.length + trailers.length) / 2) * (HEADER_FIELD_COST + 4);
  for (const text of raw) cost += text.length;
  for (const text of trailers) cost += text.length;
  return cost;
}

/**
 * A queued response's 'close' (answered, or its connection gone): out of its connection's set at
 * once. Before, an answered one stayed there, with its request and Koa context, until the next
 * request pipelined on that connection or its close (~26 KB a connection that stays open). One
 * function for all: nothing made per request.
 */
function forgetQueued(this: ServerResponse): void {
  queuedOn.get(this.req.socket)?.delete(this);
}

/** What Node does for the response on a socket that closes (`onServerResponseClose`). */
function closeQueued(res: ServerResponse): void {
  res.destroyed = true;
  res.emit('close');
}

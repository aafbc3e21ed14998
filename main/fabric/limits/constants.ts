/** The per-connection limits of the worker connection (frame size, calls in flight, rate, outbound queue, timeouts). */
export { MAX_FRAME_BYTES, MAX_OPAQUE_BYTES } from '../wire/sizes.js';

/** Frames waiting to be written; a producer past this waits (the slow reader is never closed). */
export const OUTBOUND_QUEUE_FRAMES = 64;
/**
 * Bytes waiting to be written, the stream's own buffer included; a producer past this waits as it
 * does past the frame count. A single larger frame (up to the frame cap) is admitted alone, when
 * nothing is queued before it and the stream is not backed up (see `OutboundQueue`).
 */
export const OUTBOUND_QUEUE_BYTES = 4 * 1024 * 1024;
/**
 * Task.runs that may wait for room in one worker's outbound queue (a worker that stopped reading),
 * whoever made the calls: one more is refused at once (`refused`, naming the worker as not reading).
 */
export const MAX_WAITING_TASK_RUNS = 1;
/**
 * Relayed questions (`human.ask`, up to a frame each) that may wait for room in one worker's
 * outbound queue, whoever asked them: one more is refused at once (`refused`, naming the worker as
 * not reading), and its asker may ask again. Not `MAX_PENDING_QUESTIONS`: that one counts the
 * questions a connection has *asked* and not had answered; this one counts questions relayed *to*
 * a worker that wait to be written.
 */
export const MAX_WAITING_RELAYED_QUESTIONS = 1;
/** A peer's calls in flight at once; one more is refused alone. */
export const MAX_IN_FLIGHT_CALLS = 32;
/** A peer's call rate: a token bucket refilling at this many per second… */
export const CALLS_PER_SECOND = 10;
/** …holding at most this many, and starting full. */
export const CALL_BURST = 32;
/**
 * Approvals and questions a connection may have asked and be waiting on at once (its own
 * `human.approve`/`human.ask` calls). Not `MAX_WAITING_RELAYED_QUESTIONS`: that one counts the
 * questions relayed *to* a worker that wait for room in its outbound queue.
 */
export const MAX_PENDING_APPROVALS = 4;
export const MAX_PENDING_QUESTIONS = 4;
/** How deep a delegation chain may go. */
export const MAX_DELEGATION_DEPTH = 4;
/** A spawned worker's time to say hello. */
export const HELLO_TIMEOUT_MS = 30_000;
/** The shared socket's patience before it closes a silent connection. */
export const SHARED_SOCKET_HELLO_TIMEOUT_MS = 5_000;
/**
 * After a refused hello, how long the peer has to read the error and close its end before the
 * connection is destroyed anyway (a peer that never reads or never closes cannot hold it open).
 */
export const CLOSE_GRACE_MS = 5_000;
/** How much of a child's stderr is kept for error messages. */
export const STDERR_TAIL_BYTES = 8 * 1024;

/**
 * The thread that performs a plugin's HTTP requests. The guest's worker is busy inside a
 * synchronous guest call when the guest fetches, so it hands the request to this thread (its own
 * child, started on the first request) and sleeps in `Atomics.wait` until the answer is posted.
 * When the worker ends (a deadline, a cancel, an unload), this thread and its sockets end with it.
 *
 * This one file is both sides: `FetchThread` (used in the guest's worker) starts it on itself,
 * and the code at the bottom serves requests when the file runs as that thread.
 */
import { MessageChannel, Worker, isMainThread, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { AllowList } from './allow-list.js';
import type { NetworkRequest } from './exchange.js';
import { runRequest, type RunAnswer } from './run-request.js';

const ROLE = 'chatty-plugin-fetch-thread';

interface FetchThreadData {
  role: typeof ROLE;
  allow: readonly string[];
  /** Int32 slot 0: 0 while a request runs, 1 once its answer is on `port`. */
  control: SharedArrayBuffer;
  port: MessagePort;
}

interface Ask {
  seq: number;
  request: NetworkRequest;
  maxBodyBytes: number;
  timeoutMs: number;
}

type Reply = { seq: number; answer: RunAnswer };

/** The guest worker's end: one request at a time, synchronously. */
export class FetchThread {
  private worker: Worker | undefined;
  private port: MessagePort | undefined;
  private readonly control = new Int32Array(new SharedArrayBuffer(4));
  private seq = 0;

  constructor(private readonly allow: readonly string[]) {}

  /** Blocks until the request is answered (or refused); never throws. */
  request(request: NetworkRequest, maxBodyBytes: number, timeoutMs: number): RunAnswer {
    try {
      const port = this.start();
      const seq = ++this.seq;
      Atomics.store(this.control, 0, 0);
      port.postMessage({ seq, request, maxBodyBytes, timeoutMs } satisfies Ask);
      // The thread keeps the request's own clock; this wait only outlives a thread that died.
      if (Atomics.wait(this.control, 0, 0, timeoutMs + 5_000) === 'timed-out') throw new Error('the fetch thread did not answer');
      const reply = receiveMessageOnPort(port)?.message as Reply | undefined;
      if (!reply || reply.seq !== seq) throw new Error('the fetch thread lost the answer');
      return reply.answer;
    } catch (err) {
      const message = `network: ${err instanceof Error ? err.message : String(err)}`;
      return { ok: false, error: { tag: 'internal-error', val: message }, message, target: '?', method: request.method, hops: [] };
    }
  }

  private start(): MessagePort {
    if (this.port) return this.port;
    const { port1, port2 } = new MessageChannel();
    const data: FetchThreadData = { role: ROLE, allow: this.allow, control: this.control.buffer as SharedArrayBuffer, port: port2 };
    this.worker = new Worker(new URL(import.meta.url), { workerData: data, transferList: [port2], env: {}, execArgv: [] });
    this.worker.unref();
    this.port = port1;
    return port1;
  }
}

function serve(data: FetchThreadData): void {
  const allow = new AllowList(data.allow);
  const control = new Int32Array(data.control);
  data.port.on('message', (ask: Ask) => {
    // runRequest never rejects: a request the thread lost would leave the guest waiting out its deadline.
    void runRequest(ask.request, { allow, maxBodyBytes: ask.maxBodyBytes, timeoutMs: ask.timeoutMs }).then((answer) => {
      data.port.postMessage({ seq: ask.seq, answer } satisfies Reply);
      Atomics.store(control, 0, 1);
      Atomics.notify(control, 0);
    });
  });
}

if (!isMainThread && (workerData as Partial<FetchThreadData> | null)?.role === ROLE) serve(workerData as FetchThreadData);

import { ConnectionClosedError } from './errors.js';
import type { TransportFrame } from './frame.js';
import type { FrameTransport } from './transport.js';

const END = Symbol('end');
type Item = TransportFrame | typeof END;

/**
 * Two connected in-process endpoints. Frames pass by reference, never serialised, so batches
 * and malformed values arrive exactly as sent. Delivery is on a microtask, in send order, so a
 * handler that answers at once never re-enters its caller.
 */
export function createChannelPair(): [FrameTransport, FrameTransport] {
  const a = new ChannelEndpoint();
  const b = new ChannelEndpoint();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

class ChannelEndpoint implements FrameTransport {
  peer!: ChannelEndpoint;
  private inbox: Item[] = [];
  private scheduled = false;
  private onFrame: ((frame: TransportFrame) => void) | undefined;
  private finishInput: (() => void) | undefined;
  private inputDone = false;
  private outputDone = false;

  start(onFrame: (frame: TransportFrame) => void): Promise<void> {
    if (this.onFrame) return Promise.reject(new Error('jsonrpc: a channel endpoint starts once'));
    this.onFrame = onFrame;
    return new Promise((resolve) => {
      this.finishInput = resolve;
      if (this.inputDone) resolve();
      else this.schedule();
    });
  }

  send(frame: TransportFrame): Promise<void> {
    if (this.outputDone) return Promise.reject(new ConnectionClosedError());
    this.peer.enqueue(frame);
    return Promise.resolve();
  }

  end(): Promise<void> {
    if (!this.outputDone) {
      this.outputDone = true;
      this.peer.enqueue(END);
    }
    return Promise.resolve();
  }

  close(): void {
    void this.end();
    this.stopInput();
    this.peer.outputDone = true; // like a write to a closed socket: the peer's sends now fail
  }

  private enqueue(item: Item): void {
    if (this.inputDone) return;
    this.inbox.push(item);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || !this.onFrame) return;
    this.scheduled = true;
    queueMicrotask(() => this.deliver());
  }

  private deliver(): void {
    this.scheduled = false;
    const items = this.inbox;
    this.inbox = [];
    for (const item of items) {
      if (this.inputDone || !this.onFrame) return;
      if (item === END) return this.stopInput();
      this.onFrame(item);
    }
  }

  private stopInput(): void {
    if (this.inputDone) return;
    this.inputDone = true;
    this.inbox = [];
    this.finishInput?.();
  }
}

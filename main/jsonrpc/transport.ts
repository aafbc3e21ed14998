import type { TransportFrame } from './frame.js';

/**
 * What the protocol layer needs from anything that moves frames. Transports carry complete
 * frames only; they never flatten a batch, assign ids or answer anything. I/O failures are not
 * frames: they reject the promise `start` returns.
 */
export interface FrameTransport {
  /**
   * Starts delivering incoming frames, in arrival order, to `onFrame`. Resolves when the input
   * ends (the peer finished, or `close` was called); rejects with the I/O or framing failure.
   * Call once.
   */
  start(onFrame: (frame: TransportFrame) => void): Promise<void>;
  /** Writes one complete frame; resolves once the sink has taken it. Rejects after `end`/`close`. */
  send(frame: TransportFrame): Promise<void>;
  /** Ends the output after everything already sent; the input stays open. */
  end(): Promise<void>;
  /** Stops both directions now. */
  close(): void;
}

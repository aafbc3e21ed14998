import { MIB } from '../limits.js';

/**
 * The arguments (the JSON text's length) every module of one gateway may hold together in
 * waiting calls: 256 MiB by default. Each module is capped at `MAX_WAITING_ARGUMENT_BYTES`
 * (64 MiB), but N slow modules would otherwise hold N times that in the Electron main process.
 * 256 MiB is four modules at their own cap: a burst at a few slow plugins still fits, while the
 * whole gateway's waiting arguments stay a fraction of a desktop app's memory.
 */
export const DEFAULT_TOTAL_WAITING_ARGUMENT_BYTES = 256 * MIB;

/**
 * One account of waiting argument bytes, shared by the handles of one `ModuleRegistry` (a handle
 * made without one has its own). A handle adds a call's bytes when it starts to wait (asked of the
 * credit meter, or queued) and takes them off when it stops (posted to the worker, cancelled,
 * failed, closed). Plain integer adds: it is on every call's path.
 */
export class WaitingBudget {
  /** Bytes held now by waiting calls of every handle sharing this budget. */
  held = 0;

  constructor(readonly cap: number = DEFAULT_TOTAL_WAITING_ARGUMENT_BYTES) {
    if (!Number.isSafeInteger(cap) || cap <= 0) throw new RangeError(`the total cap on waiting argument bytes must be a positive whole number, not ${cap}`);
  }

  /**
   * Whether a call of `bytes` must be refused: it would take the total over the cap. A call is
   * refused only while others hold bytes, so a lone call always fits (as under a module's own cap).
   */
  refuses(bytes: number): boolean {
    return this.held > 0 && this.held + bytes > this.cap;
  }
}

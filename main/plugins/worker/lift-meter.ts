/**
 * The output cap, enforced on what jco's lift actually reads from guest memory, whatever the
 * core names and however many memories the component has.
 *
 * jco's generated code reads guest memory through two globals: `DataView` (every scalar of a
 * return area, list element and record) and `TextDecoder` (every string, as a view on the
 * memory). This worker replaces both with metered subclasses before the component's module is
 * evaluated. A read is charged to the current call's answer when it happens while a guest call is
 * open and no guest function is on the stack: that is the lift of the answer (jco lifts after the
 * core function has returned). Reads while a guest function is on the stack belong to a host
 * import's arguments (a log line, an LLM prompt) and are bounded per string instead.
 *
 * "A guest function is on the stack" is known without trusting any name: every function a core
 * instance exports is wrapped (in `instantiateCore`) with a depth counter, so whichever function
 * jco lifts, and whichever memory its answer points into, the lift happens at depth 0. A read
 * the meter cannot place errs on the side of the answer.
 */

/** An answer over the cap, refused before jco copies its bytes. */
export class OutputTooLarge extends Error {
  override readonly name = 'OutputTooLarge';
  constructor(
    readonly bytes: number,
    readonly limit: number,
    what: string,
  ) {
    super(`${what} output is over the ${limit}-byte cap (${bytes} bytes read so far)`);
  }
}

/** A string a guest hands a host import that is larger than any host import takes. */
export class HostInputTooLarge extends Error {
  override readonly name = 'HostInputTooLarge';
}

/** The guest's answer cannot be lifted (it points outside memory, or does not match its type). */
export class InvalidOutput extends Error {
  override readonly name = 'InvalidOutput';
}

type AnyFn = (...args: unknown[]) => unknown;

export class LiftMeter {
  /** Guest functions on the stack (wrapped core exports). */
  private depth = 0;
  /** The open call's label, or undefined between calls. */
  private call: string | undefined;
  private textBytes = 0;
  private structBytes = 0;

  constructor(
    private readonly maxOutputBytes: number,
    private readonly maxHostStringBytes: number,
  ) {}

  /** Opens a guest call whose answer is metered. */
  begin(what: string): void {
    this.call = what;
    this.textBytes = 0;
    this.structBytes = 0;
    this.depth = 0;
  }

  end(): void {
    this.call = undefined;
    this.depth = 0;
  }

  /** Bytes of text and of structure the last call's lift read (for tests and logs). */
  get read(): { text: number; struct: number } {
    return { text: this.textBytes, struct: this.structBytes };
  }

  /** A string of `n` bytes is about to be decoded from guest memory. */
  chargeText(n: number): void {
    if (this.call !== undefined && this.depth === 0) {
      this.textBytes += n;
      if (this.textBytes > this.maxOutputBytes) throw new OutputTooLarge(this.textBytes, this.maxOutputBytes, this.call);
    } else if (this.depth > 0 && n > this.maxHostStringBytes) {
      throw new HostInputTooLarge(`the guest passed the host a ${n}-byte string, over the ${this.maxHostStringBytes}-byte limit for host calls`);
    }
  }

  /** `n` bytes of a return area, list or record are about to be read from guest memory. */
  chargeStruct(n: number): void {
    if (this.call === undefined || this.depth !== 0) return;
    this.structBytes += n;
    if (this.structBytes > this.maxOutputBytes) throw new OutputTooLarge(this.structBytes, this.maxOutputBytes, this.call);
  }

  /** Every exported function of a core instance, wrapped with the depth counter. */
  wrapExports(exports: Record<string, unknown>): Record<string, unknown> {
    const wrapped: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(exports)) {
      const value = exports[key];
      wrapped[key] = typeof value === 'function' ? this.wrap(value as AnyFn) : value;
    }
    return wrapped;
  }

  private wrap(fn: AnyFn): AnyFn {
    const meter = this;
    return function guestFunction(...args: unknown[]): unknown {
      meter.depth++;
      try {
        return fn(...args);
      } finally {
        meter.depth--;
      }
    };
  }

  /**
   * Replaces `DataView` and `TextDecoder` in this worker's global scope with metered subclasses.
   * Called once, before jco's module is imported (jco looks both up when it runs).
   */
  install(): void {
    const meter = this;
    // Not generic here: the subclass only reads through, whatever buffer jco hands it.
    const Base = globalThis.DataView as unknown as new (buffer: ArrayBufferLike, byteOffset?: number, byteLength?: number) => DataView;
    class MeteredDataView extends Base {
      override getInt8(o: number): number {
        meter.chargeStruct(1);
        return super.getInt8(o);
      }
      override getUint8(o: number): number {
        meter.chargeStruct(1);
        return super.getUint8(o);
      }
      override getInt16(o: number, le?: boolean): number {
        meter.chargeStruct(2);
        return super.getInt16(o, le);
      }
      override getUint16(o: number, le?: boolean): number {
        meter.chargeStruct(2);
        return super.getUint16(o, le);
      }
      override getInt32(o: number, le?: boolean): number {
        meter.chargeStruct(4);
        return super.getInt32(o, le);
      }
      override getUint32(o: number, le?: boolean): number {
        meter.chargeStruct(4);
        return super.getUint32(o, le);
      }
      override getFloat32(o: number, le?: boolean): number {
        meter.chargeStruct(4);
        return super.getFloat32(o, le);
      }
      override getFloat64(o: number, le?: boolean): number {
        meter.chargeStruct(8);
        return super.getFloat64(o, le);
      }
      override getBigInt64(o: number, le?: boolean): bigint {
        meter.chargeStruct(8);
        return super.getBigInt64(o, le);
      }
      override getBigUint64(o: number, le?: boolean): bigint {
        meter.chargeStruct(8);
        return super.getBigUint64(o, le);
      }
    }
    const Decoder = globalThis.TextDecoder;
    class MeteredTextDecoder extends Decoder {
      override decode(input?: AllowSharedBufferSource, options?: TextDecodeOptions): string {
        if (input !== undefined) meter.chargeText(input.byteLength);
        return super.decode(input, options);
      }
    }
    globalThis.DataView = MeteredDataView as DataViewConstructor;
    globalThis.TextDecoder = MeteredTextDecoder as typeof TextDecoder;
  }
}

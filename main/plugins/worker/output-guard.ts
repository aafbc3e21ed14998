/**
 * The 1 MiB output cap, enforced before jco lifts anything. jco's `instantiation: 'async'` output
 * calls our `instantiateCore` for every core module; we wrap the plugin's three core exports so
 * that, when the guest returns, the lengths in its canonical-ABI return area are read (a few
 * u32s) and an over-cap answer throws `OutputTooLarge` before jco's lift copies a byte of it.
 * jco then marks the instance trapped, and the worker replaces it.
 *
 * The same hook cuts a guest's `logging.log` message to `maxLogBytes` before the host reads it.
 */
import { Wasm, type WasmMemory, type WasmModule } from '../wasm-api.js';

const IFACE = 'chatty:plugin/plugin@0.3.0';

export class OutputTooLarge extends Error {
  override readonly name = 'OutputTooLarge';
  constructor(
    readonly bytes: number,
    readonly limit: number,
    what: string,
  ) {
    super(`${what} output is ${bytes} bytes, over the ${limit}-byte cap`);
  }
}

/** The guest's answer points outside its own memory: it cannot be lifted. */
export class InvalidOutput extends Error {
  override readonly name = 'InvalidOutput';
}

type CoreFn = (...args: number[]) => number;
type Imports = Record<string, Record<string, unknown>>;

export class OutputGuard {
  /** The memory the plugin's exports return into (for the trap message). */
  memory: WasmMemory | undefined;

  constructor(
    private readonly maxOutputBytes: number,
    private readonly maxLogBytes: number,
  ) {}

  readonly instantiateCore = async (module: WasmModule, imports?: Imports): Promise<{ exports: Record<string, unknown> }> => {
    const instance = new Wasm.Instance(module, (imports ? this.capLogImports(imports) : undefined) as object | undefined);
    const exports = instance.exports as Record<string, unknown>;
    if (typeof exports[`${IFACE}#invoke-tool`] !== 'function') return instance;
    const memory = findMemory(exports, imports);
    if (!memory) throw new Error('the plugin core module has no linear memory');
    this.memory = memory;
    const wrapped: Record<string, unknown> = { ...exports };
    const guard = (name: string, check: (view: DataView, ret: number) => void): void => {
      const fn = exports[`${IFACE}#${name}`] as CoreFn | undefined;
      if (typeof fn !== 'function') return;
      wrapped[`${IFACE}#${name}`] = (...args: number[]): number => {
        const ret = fn(...args);
        check(new DataView(memory.buffer), ret >>> 0);
        return ret;
      };
    };
    guard('invoke-tool', (v, ret) => this.checkInvoke(v, ret));
    guard('list-tools', (v, ret) => this.checkListTools(v, ret));
    guard('metadata', (v, ret) => this.checkMetadata(v, ret));
    return { exports: wrapped };
  };

  /** result<tool-result, tool-error>: tag at 0; ok: content (ptr, len) at 4/8; err: message at 8/12. */
  private checkInvoke(v: DataView, ret: number): void {
    if (ret + 16 > v.byteLength) throw new InvalidOutput(`invoke-tool's return area at ${ret} is outside the guest's memory`);
    const tag = v.getUint8(ret);
    if (tag !== 0 && tag !== 1) return; // jco's lift reports the bad discriminant
    const ptr = v.getUint32(ret + (tag === 0 ? 4 : 8), true);
    const len = v.getUint32(ret + (tag === 0 ? 8 : 12), true);
    if (len > this.maxOutputBytes) throw new OutputTooLarge(len, this.maxOutputBytes, 'invoke-tool');
    if (ptr + len > v.byteLength) throw new InvalidOutput(`invoke-tool's ${len}-byte answer at ${ptr} runs past the guest's memory (${v.byteLength} bytes)`);
  }

  /** list<tool-definition>: (base, n) at ret; each record is three (ptr, len) strings, 24 bytes. */
  private checkListTools(v: DataView, ret: number): void {
    if (ret + 8 > v.byteLength) return;
    const base = v.getUint32(ret, true);
    const n = v.getUint32(ret + 4, true);
    let total = n * 24;
    if (total > this.maxOutputBytes) throw new OutputTooLarge(total, this.maxOutputBytes, 'list-tools');
    if (base + total > v.byteLength) return;
    for (let i = 0; i < n; i++) {
      const rec = base + i * 24;
      total += v.getUint32(rec + 4, true) + v.getUint32(rec + 12, true) + v.getUint32(rec + 20, true);
      if (total > this.maxOutputBytes) throw new OutputTooLarge(total, this.maxOutputBytes, 'list-tools');
    }
  }

  /**
   * plugin-metadata: name, version, description (ptr, len) at 0..24, capabilities (ptr, n) at
   * 24/28, config-keys (ptr, n) at 32/36, each key 20 bytes with two strings.
   */
  private checkMetadata(v: DataView, ret: number): void {
    if (ret + 40 > v.byteLength) return;
    let total = v.getUint32(ret + 4, true) + v.getUint32(ret + 12, true) + v.getUint32(ret + 20, true);
    total += v.getUint32(ret + 28, true);
    const keys = v.getUint32(ret + 32, true);
    const nKeys = v.getUint32(ret + 36, true);
    total += nKeys * 20;
    if (total > this.maxOutputBytes) throw new OutputTooLarge(total, this.maxOutputBytes, 'metadata');
    if (keys + nKeys * 20 > v.byteLength) return;
    for (let i = 0; i < nKeys; i++) {
      total += v.getUint32(keys + i * 20 + 4, true) + v.getUint32(keys + i * 20 + 12, true);
      if (total > this.maxOutputBytes) throw new OutputTooLarge(total, this.maxOutputBytes, 'metadata');
    }
  }

  /** logging.log(level, message) lowers to (ptr, len, ptr, len): shorten the lengths before the lift. */
  private capLogImports(imports: Imports): Imports {
    const logging = imports['chatty:plugin/logging@0.3.0'];
    const log = logging?.['log'];
    if (typeof log !== 'function') return imports;
    const cap = this.maxLogBytes;
    const capped = Object.assign(
      (lp: number, ll: number, mp: number, ml: number) => (log as CoreFn)(lp, Math.min(ll >>> 0, 64), mp, Math.min(ml >>> 0, cap)),
      log,
    );
    return { ...imports, 'chatty:plugin/logging@0.3.0': { ...logging, log: capped } };
  }
}

function findMemory(exports: Record<string, unknown>, imports: Imports | undefined): WasmMemory | undefined {
  if (exports['memory'] instanceof Wasm.Memory) return exports['memory'];
  for (const value of Object.values(exports)) if (value instanceof Wasm.Memory) return value;
  for (const ns of Object.values(imports ?? {})) {
    for (const value of Object.values(ns)) if (value instanceof Wasm.Memory) return value;
  }
  return undefined;
}

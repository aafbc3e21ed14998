/**
 * jco's `instantiateCore` hook: every core instance of the component is created here. It checks,
 * as each instance is created, that the component does not create more memories or tables than
 * the load-time plan divided the plugin's budget among (the plan comes from counting jco's
 * instantiations; this is the backstop if that count was ever wrong), and wraps every exported
 * function for the lift meter.
 */
import type { GuestSandbox } from './protocol.js';
import type { LiftMeter } from './lift-meter.js';
import { Wasm, type WasmMemory, type WasmModule } from '../wasm-api.js';

type Imports = Record<string, Record<string, unknown>>;

export class CoreInstances {
  /** Every linear memory the instances export or import (for the trap note). */
  readonly memories = new Set<WasmMemory>();
  private memoriesMade = 0;
  private tablesMade = 0;

  constructor(
    private readonly sandbox: GuestSandbox,
    /** The compiled core modules by file name, as handed to jco's `getCoreModule`. */
    private readonly modules: Record<string, WasmModule>,
    private readonly meter: LiftMeter,
  ) {}

  readonly instantiateCore = async (module: WasmModule, imports?: Imports): Promise<{ exports: Record<string, unknown> }> => {
    const file = this.fileOf(module);
    const shape = this.sandbox.perModule[file];
    if (!shape) throw new Error(`jco instantiated core module ${file}, which the load-time plan does not know`);
    this.memoriesMade += shape.memories;
    this.tablesMade += shape.tables;
    if (this.memoriesMade > this.sandbox.memories || this.tablesMade > this.sandbox.tables) {
      throw new Error(
        `the component creates more memories or tables than planned (${this.memoriesMade}/${this.sandbox.memories} memories, ` +
          `${this.tablesMade}/${this.sandbox.tables} tables): refused`,
      );
    }
    const instance = new Wasm.Instance(module, imports as object | undefined);
    for (const ns of Object.values(imports ?? {})) for (const v of Object.values(ns)) if (v instanceof Wasm.Memory) this.memories.add(v);
    for (const v of Object.values(instance.exports)) if (v instanceof Wasm.Memory) this.memories.add(v);
    return { exports: this.meter.wrapExports(instance.exports) };
  };

  /** The largest memory in use, as a fraction of the per-memory cap (1 means at the cap). */
  fullest(capBytesPerMemory: number): { bytes: number; fraction: number } | undefined {
    let best: { bytes: number; fraction: number } | undefined;
    for (const m of this.memories) {
      const bytes = m.buffer.byteLength;
      const fraction = bytes / capBytesPerMemory;
      if (!best || fraction > best.fraction) best = { bytes, fraction };
    }
    return best;
  }

  private fileOf(module: WasmModule): string {
    for (const [name, m] of Object.entries(this.modules)) if (m === module) return name;
    throw new Error('jco instantiated a core module that was not handed to it');
  }
}

/**
 * The few WebAssembly JS-API types the runtime uses, declared here because the project's `lib`
 * has no DOM and @types/node 20 does not declare the `WebAssembly` namespace.
 */
export interface WasmModule {
  readonly [Symbol.toStringTag]: string;
}
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}
export interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports?: object) => WasmInstance;
  Memory: new (descriptor: { initial: number; maximum?: number }) => WasmMemory;
  RuntimeError: new (message?: string) => Error;
}

export const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/**
 * A buffer for a whole component (megabytes) on pages of its own, outside the C allocator, given
 * back to the system when it is collected.
 *
 * Why: glibc raises its mmap threshold to the size of a big block once one is freed (up to
 * 32 MiB), so after the first component's bytes were freed, the next ones came from the main
 * thread's heap (brk), which can only shrink from its top: one component's worth (12 MB) stayed
 * resident for the process's life in a third of idle gateways (docs/benchmarks.md "Memory").
 * V8 gives a resizable ArrayBuffer pages it maps itself, as it does a WebAssembly memory.
 */

/** Below this, a plain array: small blocks stay under glibc's threshold and cost a page each here. */
const PAGE_BACKED_FROM = 1 << 20;

type ResizableArrayBufferConstructor = new (length: number, options: { maxByteLength: number }) => ArrayBuffer;

/** `size` zeroed bytes; from `PAGE_BACKED_FROM` up, backed by pages V8 maps (a fixed-length view). */
export function pageBackedBytes(size: number): Uint8Array {
  if (size < PAGE_BACKED_FROM) return new Uint8Array(size);
  const buffer = new (ArrayBuffer as unknown as ResizableArrayBufferConstructor)(size, { maxByteLength: size });
  return new Uint8Array(buffer, 0, size);
}

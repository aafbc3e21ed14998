/**
 * Sizes that are facts of the wire itself, so both ends (broker and worker) agree on them
 * without the worker importing the broker's connection limits.
 */

/** Longest line either end reads: 33 MiB, newline excluded (an interim cap, kept until a smaller one is agreed). */
export const MAX_FRAME_BYTES = 33 * 1024 * 1024;

/** Each opaque TaskMetadata value (conversation, handoff, evidence): 32 MiB of raw JSON. */
export const MAX_OPAQUE_BYTES = 32 * 1024 * 1024;

/** Every frame says `"v":3`; there is no fallback to an older version. */
export const WIRE_VERSION = 3;

/**
 * How deep a frame that the broker scans (one naming `metadata`: the opaque values' frames) may
 * nest, counted from the frame object itself, so an opaque value has this less the three levels
 * above it. No honest metadata comes near it; past it the frame is refused (the connection
 * closes), so the scan holds a bounded number of open levels whatever the line's length.
 */
export const MAX_NESTING_DEPTH = 1000;

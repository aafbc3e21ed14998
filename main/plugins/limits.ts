/** Host ceilings (and defaults) for every plugin call, from PROTOCOL-NOTES §4. */
export const MIB = 1024 * 1024;

/** Guest output per call: `tool-result` content plus any error text. */
export const MAX_OUTPUT_BYTES = 1 * MIB;
/** Linear memory per instance, the ceiling and the default of `max_memory_mb`. */
export const MAX_MEMORY_MB = 256;
/** Wall clock per `invoke-tool`, the ceiling and the default of `max_execution_ms`. */
export const MAX_EXECUTION_MS = 60_000;
/** Wall clock for `metadata` and `list-tools`. */
export const METADATA_TIMEOUT_MS = 1_000;
/** The largest file `file.read-bytes` hands a guest. */
export const MAX_FILE_BYTES = 256 * MIB;
/** Instantiating a component (its start function and initialisers included). */
export const INSTANTIATE_TIMEOUT_MS = 10_000;
/** A guest's log line is cut to this many bytes before the host reads it. */
export const MAX_LOG_BYTES = 64 * 1024;
/** WebAssembly pages per MiB. */
export const PAGES_PER_MIB = 16;

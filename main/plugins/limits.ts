/** Host ceilings (and defaults) for every plugin call. A manifest may ask for less, never more. */
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
/**
 * After a start that ran past `INSTANTIATE_TIMEOUT_MS`, a module refuses calls for this long before
 * it tries again; the wait doubles at each such failure up to `START_RETRY_MAX_MS`, and a start
 * that succeeds resets it. A component whose top-level code spins would otherwise hold a start
 * turn for the whole limit at every call.
 */
export const START_RETRY_FIRST_MS = 1_000;
export const START_RETRY_MAX_MS = 60_000;
/** A guest's log line is cut to this many bytes before the host reads it. */
export const MAX_LOG_BYTES = 64 * 1024;
/** WebAssembly pages per MiB. */
export const PAGES_PER_MIB = 16;
/**
 * The JS heap (V8 old generation) of one module's worker thread. WebAssembly memory is not part
 * of it (that is `max_memory_mb`'s job); this bounds what the host side of a call may allocate
 * (lifted arguments and results, bindings), so a runaway allocation ends that worker, not the
 * process.
 */
export const WORKER_HEAP_MB = 256;
/** What a guest may log per call (its `logging.log` lines, stdout/stderr, host warnings). */
export const MAX_LOG_BYTES_PER_CALL = 1 * MIB;
export const MAX_LOG_LINES_PER_CALL = 1000;
/**
 * The host's own lines about a call's requests (`network: GET api.example.com:443 → 200, 5120
 * bytes`, one a request or a hop): a budget of their own, which the guest's lines cannot use up
 * (a guest logging 1,000 lines first must not hide what it reached). Bounded as well: a refused
 * `fetch` costs the guest nothing but its line, so a loop of them is a flood.
 */
export const MAX_NETWORK_LINES_PER_CALL = 1000;
export const MAX_NETWORK_LOG_BYTES_PER_CALL = 256 * 1024;
/** What one module's request lines may take of the log a second, after a call's burst (their own `LogRate`). */
export const MAX_NETWORK_LOG_BYTES_PER_SECOND = 32 * 1024;
/**
 * What one module may log a second, across its calls and engine starts, after a burst of one
 * call's whole budget (a client calling in a loop would otherwise get 1 MiB into the log per
 * call): each line is charged its message's bytes plus `LOG_LINE_COST`, so about 10 GiB a day at
 * most however the guest cuts its lines, where the per-call budget alone allowed a GiB a second
 * of calls.
 */
export const MAX_LOG_BYTES_PER_SECOND = 128 * 1024;
/**
 * What a log line costs beyond its message: each is a record in the gateway's log
 * (`chatty-gateway plugins [<name up to 64>] <level>: ` and a newline, under 100 bytes), so one-byte
 * or empty lines are no way around `MAX_LOG_BYTES_PER_SECOND`.
 */
export const LOG_LINE_COST = 128;
/**
 * The largest single string a guest may hand a host import (a log line before it is cut, an LLM
 * prompt, a path): larger ones trap the call instead of being copied onto the worker's heap.
 */
export const MAX_HOST_STRING_BYTES = 4 * MIB;
/**
 * Table entries per plugin, shared among all the tables its core instances define. A table lives
 * on the worker's JS heap (not in linear memory); an unbounded `table.grow` could end the process.
 */
export const MAX_TABLE_ENTRIES = 1_000_000;

/** The largest component file a load (or `plugin grant`) reads. */
export const MAX_COMPONENT_BYTES = 512 * MIB;

/** The largest `module.toml` read (by a load, and by the watcher looking at a folder): a manifest is a few hundred bytes. */
export const MAX_MANIFEST_BYTES = 1 * MIB;

/**
 * Calls one module may hold waiting for its engine (queued, not yet posted to its worker; the up to
 * 8 posted ahead are not counted). Each holds its arguments, so without a cap a client could queue
 * calls at a slow module until the process runs out of memory. Past it a call is refused at once
 * with `PluginCallError` `busy`. 256 is far more than a legitimate burst (an agent fanning out,
 * the 32-client bench), and small enough that a module's waiting arguments stay bounded.
 */
export const MAX_WAITING_CALLS = 256;

/**
 * The arguments (the JSON text's length) one module's waiting calls may hold together, those the
 * credit meter is being asked about included. A request body may be 10 MiB, so the count alone
 * (`MAX_WAITING_CALLS`) would let a module hold gigabytes. A call that would take them past it is
 * refused `busy` as one past the count is, unless no call is waiting (a lone call always fits).
 */
export const MAX_WAITING_ARGUMENT_BYTES = 64 * MIB;

/**
 * How many times one module is put to the grant desk in a registry's life without being granted
 * (each reload of a changed folder asks again): past it, it is not asked again, and waits for the
 * grants file (`plugin grant`). A folder rewriting its module.toml could otherwise ask a person
 * without end. A grant resets the count.
 */
export const MAX_UNGRANTED_ASKS = 3;
/**
 * Grant requests waiting at the desk at once, for all modules: a modules folder of a thousand
 * plugins that all ask would otherwise put a thousand requests before a person. The others are
 * listed ungranted, not asked, and wait for the grants file.
 */
export const MAX_OPEN_GRANT_ASKS = 16;

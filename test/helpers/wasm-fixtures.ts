/**
 * Test plugins built at test time from hand-written WebAssembly text and the real WIT
 * (`main/plugins/wit/plugin.wit`), through jco-transpile's wasm-tools (`parse`, `componentEmbed`,
 * `componentNew`): a fraction of a second each, no 12 MB JS engine.
 *
 * Every local kind implements `chatty:plugin/plugin@0.3.0` by hand in the canonical ABI and has
 * these tools (the argument is the raw `arguments-json` string):
 *   echo      returns its arguments-json
 *   fail      returns tool-error {failed, "it failed"}
 *   config    config.get(args): some → the value, none → tool-error {failed, "none"}
 *   read      file.read-bytes(args): ok → the bytes as text, err → tool-error {failed, <err>}
 *   log       logging.log("info", args) → ""
 *   llm       llm.complete(args as model, [{user, args}], none): ok → content, err → tool-error
 *   billing   billing.acquire-session(100): ok → "<token> <balance> <reserved> <pricing>", err → tool-error
 *   usage     billing.report-usage(3, 4): ok → "", err → tool-error
 * plus the kind's own tool: `loop` (spins forever), `trap` (unreachable), `big` (2 MiB of output),
 * `grow` (memory.grow until refused, then traps), `slow` (busy-waits the number of ms in its
 * arguments, reading wasi:clocks/monotonic-clock). `loop-list-tools` spins in `list-tools` instead.
 * `other-world` exports `example:other/greeter@1.0.0` only; `sockets` also imports
 * `wasi:sockets/instance-network@0.2.0`.
 *
 * `hostile` misbehaves on purpose: `list-tools` claims 2^27 tools and `metadata` a 2 GiB name
 * (neither backed by memory), and its tools are
 *   claim      ok(content = 16 bytes at address 16, but a length of <arguments-json> bytes)
 *   bad-tag    a result discriminant of 7
 *   bad-kind   a tool-error whose kind discriminant is 9
 *   oob        ok(content at 0xffffff00, 16 bytes): outside linear memory
 *   flood      grows memory by <arguments-json> pages and passes all of it to llm.complete as a
 *              list of (zeroed, valid) messages: 2048 per page, for the host to lift
 *   log-flood  logging.log("info", <the first 64 KiB of memory>) <arguments-json> times
 *   log-utf8   logging.log("info", <65535 bytes of '€', 3 bytes each>) <arguments-json> times
 *   big        ok(2 MiB of memory, really there)
 *
 * `named-tools` (not in FIXTURE_KINDS) lists a tool `named` whose description is what its list-tools
 * got from llm.complete("m", [], none): the content, or the error, so its list follows the host's answer.
 *
 * `tables` defines five funcref tables; its tool `grow-tables` grows each by 9,999,999 entries (to V8's 10-million limit)
 * and answers "grown" if every grow succeeded, "refused" otherwise.
 *
 * `wasi` imports WASI's basics as a real component would: `env` and `preopens` answer as many
 * bytes of content as wasi:cli/environment and wasi:filesystem/preopens list entries, `stdout`
 * writes its arguments-json to wasi:cli/stdout, `stdin` answers what one blocking read of
 * wasi:cli/stdin returns (a tool-error "closed" at end of file).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { ModuleRegistry, type ModuleRegistryOptions, type ScanReport } from '../../main/plugins/index.js';

export type FixtureKind =
  | 'echo'
  | 'loop'
  | 'loop-list-tools'
  | 'trap'
  | 'big-output'
  | 'grow'
  | 'slow'
  | 'other-world'
  | 'sockets'
  | 'hostile'
  | 'wasi'
  | 'tables'
  /** Its core module's start function spins: instantiation never finishes (not in FIXTURE_KINDS). */
  | 'start-spins'
  /**
   * Its `list-tools` asks `llm.complete` first and lists a tool `named` described by the answer
   * (or by the error), so its list follows what the host tells the module (not in FIXTURE_KINDS).
   */
  | 'named-tools';

export const FIXTURE_KINDS: readonly FixtureKind[] = [
  'echo', 'loop', 'loop-list-tools', 'trap', 'big-output', 'grow', 'slow', 'other-world', 'sockets', 'hostile', 'wasi', 'tables',
];

const WIT_URL = new URL('../../main/plugins/wit/plugin.wit', import.meta.url);
const IFACE = 'chatty:plugin/plugin@0.3.0';
const BIG_OUTPUT_BYTES = 2 * 1024 * 1024;

/** Extra WIT packages some fixtures need, nested in the same source. */
const WASI_CLOCKS = `
package wasi:clocks@0.2.0 {
  interface monotonic-clock {
    type instant = u64;
    now: func() -> instant;
  }
}`;
const WASI_SOCKETS = `
package wasi:sockets@0.2.0 {
  interface network {
    resource network;
  }
  interface instance-network {
    use network.{network};
    instance-network: func() -> network;
  }
}`;

const WASI_BASICS = `
package wasi:io@0.2.0 {
  interface error {
    resource error;
  }
  interface streams {
    use error.{error};
    variant stream-error { last-operation-failed(error), closed }
    resource input-stream {
      blocking-read: func(len: u64) -> result<list<u8>, stream-error>;
    }
    resource output-stream {
      blocking-write-and-flush: func(contents: list<u8>) -> result<_, stream-error>;
    }
  }
}
package wasi:cli@0.2.0 {
  interface environment {
    get-environment: func() -> list<tuple<string, string>>;
  }
  interface stdout {
    use wasi:io/streams@0.2.0.{output-stream};
    get-stdout: func() -> output-stream;
  }
  interface stdin {
    use wasi:io/streams@0.2.0.{input-stream};
    get-stdin: func() -> input-stream;
  }
}
package wasi:filesystem@0.2.0 {
  interface types {
    resource descriptor;
  }
  interface preopens {
    use types.{descriptor};
    get-directories: func() -> list<tuple<descriptor, string>>;
  }
}`;

const cache = new Map<string, Promise<Uint8Array>>();

/** The component bytes for a fixture kind (built once per process). */
export function buildFixture(kind: FixtureKind): Promise<Uint8Array> {
  let built = cache.get(kind);
  if (!built) {
    built = build(kind);
    cache.set(kind, built);
  }
  return built;
}

async function build(kind: FixtureKind): Promise<Uint8Array> {
  if (kind === 'other-world') return buildOtherWorld();
  const plugin = await readFile(WIT_URL, 'utf8');
  let wit = plugin;
  let world = 'plugin-world';
  if (kind === 'slow') {
    wit = `${plugin.replace('package chatty:plugin@0.3.0;', 'package chatty:plugin@0.3.0;\nworld slow-world { include plugin-world; import wasi:clocks/monotonic-clock@0.2.0; }')}${WASI_CLOCKS}`;
    world = 'slow-world';
  } else if (kind === 'wasi') {
    const imports = 'import wasi:cli/environment@0.2.0; import wasi:cli/stdout@0.2.0; import wasi:cli/stdin@0.2.0; import wasi:filesystem/preopens@0.2.0;';
    wit = `${plugin.replace('package chatty:plugin@0.3.0;', `package chatty:plugin@0.3.0;\nworld wasi-world { include plugin-world; ${imports} }`)}${WASI_BASICS}`;
    world = 'wasi-world';
  } else if (kind === 'sockets') {
    wit = `${plugin.replace('package chatty:plugin@0.3.0;', 'package chatty:plugin@0.3.0;\nworld sockets-world { include plugin-world; import wasi:sockets/instance-network@0.2.0; }')}${WASI_SOCKETS}`;
    world = 'sockets-world';
  }
  const core = await parse(pluginWat(kind));
  const embedded = await componentEmbed({ binary: core, witSource: wit, world });
  return componentNew(embedded);
}

/** Writes `<root>/<name>/module.toml` and `<root>/<name>/plugin.wasm`; returns the module dir. */
export function writeModuleDir(
  root: string,
  name: string,
  opts: { manifest?: string; component?: Uint8Array; extra?: Record<string, string | Uint8Array> } = {},
): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const manifest =
    opts.manifest ??
    `[module]\nname = "${name}"\nversion = "1.0.0"\ndescription = "fixture ${name}"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n`;
  writeFileSync(join(dir, 'module.toml'), manifest);
  if (opts.component) writeFileSync(join(dir, 'plugin.wasm'), opts.component);
  for (const [path, content] of Object.entries(opts.extra ?? {})) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** A manifest for a fixture module, with optional extra TOML appended. */
export function fixtureManifest(name: string, extra = ''): string {
  return `[module]\nname = "${name}"\nversion = "1.0.0"\ndescription = "fixture ${name}"\nwasm = "plugin.wasm"\n\n[protocols]\nmcp = true\n${extra}`;
}

// ---------------------------------------------------------------------------------------------
// The WAT generator. Memory layout: static data from 16, the return area at RET, scratch return
// areas for host calls at SCRATCH, a bump heap from HEAP that post-return resets.

const RET = 8192;
const SCRATCH = 8256;
const MSG = 8320;
const HEAP = 16384;

class Data {
  private bytes: number[] = [];
  private readonly base = 16;
  private readonly enc = new TextEncoder();

  /** Appends bytes aligned to `align`; returns their address. */
  put(bytes: Uint8Array | number[], align = 1): number {
    while ((this.base + this.bytes.length) % align !== 0) this.bytes.push(0);
    const at = this.base + this.bytes.length;
    this.bytes.push(...bytes);
    return at;
  }

  str(s: string): { ptr: number; len: number } {
    const b = this.enc.encode(s);
    return { ptr: this.put(b), len: b.length };
  }

  u32s(values: number[]): number {
    const b = new Uint8Array(values.length * 4);
    const view = new DataView(b.buffer);
    values.forEach((v, i) => view.setUint32(i * 4, v, true));
    return this.put(b, 4);
  }

  segment(): string {
    if (this.base + this.bytes.length > RET) throw new Error('fixture data overflows the return area');
    const escaped = this.bytes.map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
    return `(data (i32.const ${this.base}) "${escaped}")`;
  }
}

interface ToolSpec {
  name: string;
  description: string;
  schema: string;
  body: string;
}

function pluginWat(kind: Exclude<FixtureKind, 'other-world'>): string {
  const data = new Data();
  const s = (text: string): string => {
    const { ptr, len } = data.str(text);
    return `(i32.const ${ptr}) (i32.const ${len})`;
  };
  const anySchema = '{"type":"object"}';
  const tools: ToolSpec[] = [
    { name: 'echo', description: 'Returns its arguments-json.', schema: '{"type":"object","additionalProperties":true}', body: `(return (call $ok (local.get 2) (local.get 3)))` },
    { name: 'fail', description: 'Always fails.', schema: anySchema, body: `(return (call $err (i32.const 3) ${s('it failed')}))` },
    {
      name: 'config', description: 'config.get(arguments-json).', schema: anySchema,
      body: `(call $config_get (local.get 2) (local.get 3) (i32.const ${SCRATCH}))
        (if (i32.eq (i32.load8_u (i32.const ${SCRATCH})) (i32.const 1))
          (then (return (call $ok (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))))
        (return (call $err (i32.const 3) ${s('none')}))`,
    },
    {
      name: 'read', description: 'file.read-bytes(arguments-json).', schema: anySchema,
      body: `(call $read_bytes (local.get 2) (local.get 3) (i32.const ${SCRATCH}))
        (if (i32.eqz (i32.load8_u (i32.const ${SCRATCH})))
          (then (return (call $ok (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))))
        (return (call $err (i32.const 3) (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))`,
    },
    {
      name: 'log', description: 'logging.log("info", arguments-json).', schema: anySchema,
      body: `(call $log ${s('info')} (local.get 2) (local.get 3))
        (return (call $ok (i32.const 0) (i32.const 0)))`,
    },
    {
      name: 'llm', description: 'llm.complete(arguments-json, [user: arguments-json]).', schema: anySchema,
      body: `(i32.store8 (i32.const ${MSG}) (i32.const 1))
        (i32.store (i32.const ${MSG + 4}) (local.get 2))
        (i32.store (i32.const ${MSG + 8}) (local.get 3))
        (i32.store (i32.const ${MSG + 12}) (i32.const 0))
        (i32.store (i32.const ${MSG + 16}) (i32.const 0))
        (i32.store8 (i32.const ${MSG + 20}) (i32.const 0))
        (call $llm_complete (local.get 2) (local.get 3) (i32.const ${MSG}) (i32.const 1)
          (i32.const 0) (i32.const 0) (i32.const 0) (i32.const ${SCRATCH}))
        (if (i32.eqz (i32.load8_u (i32.const ${SCRATCH})))
          (then (return (call $ok (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))))
        (return (call $err (i32.const 3) (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))`,
    },
    {
      name: 'billing', description: 'billing.acquire-session(100).', schema: anySchema,
      body: `(call $acquire_session (i64.const 100) (i32.const ${SCRATCH}))
        (if (i32.eqz (i32.load8_u (i32.const ${SCRATCH})))
          (then (return (call $ok (i32.load (i32.const ${SCRATCH + 8})) (i32.load (i32.const ${SCRATCH + 12}))))))
        (return (call $err (i32.const 3) (i32.load (i32.const ${SCRATCH + 8})) (i32.load (i32.const ${SCRATCH + 12}))))`,
    },
    {
      name: 'usage', description: 'billing.report-usage(3, 4).', schema: anySchema,
      body: `(call $report_usage (i64.const 3) (i64.const 4) (i32.const ${SCRATCH}))
        (if (i32.eqz (i32.load8_u (i32.const ${SCRATCH})))
          (then (return (call $ok (i32.const 0) (i32.const 0)))))
        (return (call $err (i32.const 3) (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))`,
    },
  ];
  let extraImports = '';
  let extraDefs = '';
  let listToolsPrelude = '';
  /** The tool whose description `named-tools`' list-tools sets from the llm's answer. */
  let namedTool = -1;
  switch (kind) {
    case 'loop':
      tools.push({ name: 'loop', description: 'Spins forever.', schema: anySchema, body: `(loop $spin (br $spin)) (unreachable)` });
      break;
    case 'loop-list-tools':
      listToolsPrelude = '(loop $spin (br $spin))';
      break;
    case 'start-spins':
      extraDefs = '(func $spin_at_start (loop $spin (br $spin))) (start $spin_at_start)';
      break;
    case 'trap':
      tools.push({ name: 'trap', description: 'Traps.', schema: anySchema, body: `(unreachable)` });
      break;
    case 'big-output':
      tools.push({
        name: 'big', description: 'Returns 2 MiB.', schema: anySchema,
        body: `(return (call $ok (call $alloc (i32.const ${BIG_OUTPUT_BYTES})) (i32.const ${BIG_OUTPUT_BYTES})))`,
      });
      break;
    case 'grow':
      tools.push({
        name: 'grow', description: 'Grows memory until refused, then traps.', schema: anySchema,
        body: `(loop $more (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) (unreachable)`,
      });
      break;
    case 'slow':
      extraImports = `(import "wasi:clocks/monotonic-clock@0.2.0" "now" (func $now (result i64)))`;
      tools.push({
        name: 'slow', description: 'Busy-waits the number of milliseconds in its arguments.', schema: anySchema,
        body: `(local.set $deadline (i64.add (call $now) (i64.mul (call $parse_u64 (local.get 2) (local.get 3)) (i64.const 1000000))))
          (loop $spin (br_if $spin (i64.lt_u (call $now) (local.get $deadline))))
          (return (call $ok (local.get 2) (local.get 3)))`,
      });
      break;
    case 'sockets':
      extraImports = `(import "wasi:sockets/instance-network@0.2.0" "instance-network" (func $network (result i32)))`;
      tools.push({ name: 'network', description: 'Asks for the network.', schema: anySchema, body: `(drop (call $network)) (return (call $ok (i32.const 0) (i32.const 0)))` });
      break;
    case 'hostile':
      tools.push(
        { name: 'claim', description: 'Claims a long content.', schema: anySchema, body: `(return (call $ok (i32.const 16) (i32.wrap_i64 (call $parse_u64 (local.get 2) (local.get 3)))))` },
        { name: 'bad-tag', description: 'A bad result discriminant.', schema: anySchema, body: `(drop (call $ok (i32.const 16) (i32.const 1))) (i32.store8 (i32.const ${RET}) (i32.const 7)) (return (i32.const ${RET}))` },
        { name: 'bad-kind', description: 'A bad tool-error-kind.', schema: anySchema, body: `(return (call $err (i32.const 9) (i32.const 16) (i32.const 1)))` },
        { name: 'oob', description: 'Content outside memory.', schema: anySchema, body: `(return (call $ok (i32.const 0xffffff00) (i32.const 16)))` },
        {
          name: 'flood', description: 'Hands the host a huge list of messages.', schema: anySchema,
          body: `(local.set $pages (i32.wrap_i64 (call $parse_u64 (local.get 2) (local.get 3))))
            (local.set $base (i32.mul (memory.grow (local.get $pages)) (i32.const 65536)))
            (if (i32.lt_s (local.get $base) (i32.const 0)) (then (unreachable)))
            (call $llm_complete ${s('m')} (local.get $base) (i32.mul (local.get $pages) (i32.const 2048))
              (i32.const 0) (i32.const 0) (i32.const 0) (i32.const ${SCRATCH}))
            (return (call $ok (i32.const 0) (i32.const 0)))`,
        },
        {
          name: 'log-utf8', description: "Logs 65535 bytes of '€', many times.", schema: anySchema,
          body: `(local.set $pages (i32.wrap_i64 (call $parse_u64 (local.get 2) (local.get 3))))
            (local.set $base (call $alloc (i32.const 65535)))
            (block $filled (loop $fill
              (br_if $filled (i32.ge_u (local.get $i) (i32.const 65535)))
              (i32.store8 (i32.add (local.get $base) (local.get $i)) (i32.const 0xe2))
              (i32.store8 (i32.add (local.get $base) (i32.add (local.get $i) (i32.const 1))) (i32.const 0x82))
              (i32.store8 (i32.add (local.get $base) (i32.add (local.get $i) (i32.const 2))) (i32.const 0xac))
              (local.set $i (i32.add (local.get $i) (i32.const 3)))
              (br $fill)))
            (block $done (loop $again
              (br_if $done (i32.eqz (local.get $pages)))
              (call $log ${s('info')} (local.get $base) (i32.const 65535))
              (local.set $pages (i32.sub (local.get $pages) (i32.const 1)))
              (br $again)))
            (return (call $ok (i32.const 0) (i32.const 0)))`,
        },
        {
          name: 'big', description: 'Returns 2 MiB that are really in memory.', schema: anySchema,
          body: `(return (call $ok (call $alloc (i32.const ${BIG_OUTPUT_BYTES})) (i32.const ${BIG_OUTPUT_BYTES})))`,
        },
        {
          name: 'log-flood', description: 'Logs 64 KiB lines, many times.', schema: anySchema,
          body: `(local.set $pages (i32.wrap_i64 (call $parse_u64 (local.get 2) (local.get 3))))
            (block $done (loop $again
              (br_if $done (i32.eqz (local.get $pages)))
              (call $log ${s('info')} (i32.const 0) (i32.const 65536))
              (local.set $pages (i32.sub (local.get $pages) (i32.const 1)))
              (br $again)))
            (return (call $ok (i32.const 0) (i32.const 0)))`,
        },
      );
      break;
    case 'wasi':
      extraImports = `(import "wasi:cli/environment@0.2.0" "get-environment" (func $get_environment (param i32)))
  (import "wasi:filesystem/preopens@0.2.0" "get-directories" (func $get_directories (param i32)))
  (import "wasi:cli/stdout@0.2.0" "get-stdout" (func $get_stdout (result i32)))
  (import "wasi:io/streams@0.2.0" "[method]output-stream.blocking-write-and-flush" (func $write (param i32 i32 i32 i32)))
  (import "wasi:io/streams@0.2.0" "[resource-drop]output-stream" (func $drop_stream (param i32)))
  (import "wasi:cli/stdin@0.2.0" "get-stdin" (func $get_stdin (result i32)))
  (import "wasi:io/streams@0.2.0" "[method]input-stream.blocking-read" (func $blocking_read (param i32 i64 i32)))
  (import "wasi:io/streams@0.2.0" "[resource-drop]input-stream" (func $drop_input (param i32)))`;
      tools.push(
        { name: 'env', description: 'Counts environment variables.', schema: anySchema, body: `(call $get_environment (i32.const ${SCRATCH})) (return (call $ok (i32.const 16) (i32.load (i32.const ${SCRATCH + 4}))))` },
        { name: 'preopens', description: 'Counts preopened directories.', schema: anySchema, body: `(call $get_directories (i32.const ${SCRATCH})) (return (call $ok (i32.const 16) (i32.load (i32.const ${SCRATCH + 4}))))` },
        {
          name: 'stdout', description: 'Writes its arguments to stdout.', schema: anySchema,
          body: `(local.set $base (call $get_stdout))
            (call $write (local.get $base) (local.get 2) (local.get 3) (i32.const ${SCRATCH}))
            (call $drop_stream (local.get $base))
            (if (i32.load8_u (i32.const ${SCRATCH})) (then (return (call $err (i32.const 3) ${s('write failed')}))))
            (return (call $ok (i32.const 0) (i32.const 0)))`,
        },
        {
          name: 'stdin', description: 'Reads up to 1 KiB of stdin.', schema: anySchema,
          body: `(local.set $base (call $get_stdin))
            (call $blocking_read (local.get $base) (i64.const 1024) (i32.const ${SCRATCH}))
            (call $drop_input (local.get $base))
            (if (i32.eqz (i32.load8_u (i32.const ${SCRATCH})))
              (then (return (call $ok (i32.load (i32.const ${SCRATCH + 4})) (i32.load (i32.const ${SCRATCH + 8}))))))
            (if (i32.eq (i32.load8_u (i32.const ${SCRATCH + 4})) (i32.const 1))
              (then (return (call $err (i32.const 3) ${s('closed')}))))
            (return (call $err (i32.const 3) ${s('read failed')}))`,
        },
      );
      break;
    case 'tables': {
      extraDefs = [0, 1, 2, 3, 4].map((i) => `(table $t${i} 1 funcref)`).join('\n  ');
      const grows = [0, 1, 2, 3, 4]
        .map((i) => `(if (i32.eq (table.grow $t${i} (ref.null func) (i32.const 9999999)) (i32.const -1)) (then (local.set $base (i32.const 1))))`)
        .join('\n            ');
      tools.push({
        name: 'grow-tables', description: 'Grows five tables to 10 million entries each.', schema: anySchema,
        body: `${grows}
            (if (local.get $base) (then (return (call $ok ${s('refused')}))))
            (return (call $ok ${s('grown')}))`,
      });
      break;
    }
    case 'named-tools':
      tools.push({ name: 'named', description: 'Described by list-tools.', schema: anySchema, body: `(return (call $ok (i32.const 0) (i32.const 0)))` });
      namedTool = tools.length - 1;
      break;
    case 'echo':
      break;
  }

  // list-tools: a static list<tool-definition> (24 bytes each: three strings).
  const records: number[] = [];
  for (const tool of tools) {
    for (const text of [tool.name, tool.description, tool.schema]) {
      const { ptr, len } = data.str(text);
      records.push(ptr, len);
    }
  }
  const toolsBase = data.u32s(records);
  const listRet = kind === 'hostile' ? data.u32s([toolsBase, 0x0800_0000]) : data.u32s([toolsBase, tools.length]);
  if (namedTool >= 0) {
    // llm.complete("m", [], none): ok and err alike hold their string at SCRATCH + 4 and + 8; it becomes the tool's description.
    const description = toolsBase + namedTool * 24 + 8;
    listToolsPrelude = `(call $llm_complete ${s('m')} (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const ${SCRATCH}))
    (i32.store (i32.const ${description}) (i32.load (i32.const ${SCRATCH + 4})))
    (i32.store (i32.const ${description + 4}) (i32.load (i32.const ${SCRATCH + 8})))`;
  }

  // metadata: a static plugin-metadata (five (ptr, len) pairs).
  const caps = data.put([0, 1, 2, 3, 4]);
  const keyName = data.str('greeting');
  const keyDesc = data.str('What `config` should find.');
  const configKey = data.u32s([keyName.ptr, keyName.len, keyDesc.ptr, keyDesc.len, 0]);
  const mName = data.str(`fixture-${kind}`);
  const mVersion = data.str('1.0.0');
  const mDesc = data.str(`A hand-written ${kind} fixture.`);
  const metaRet = data.u32s([mName.ptr, kind === 'hostile' ? 0x7fff_ffff : mName.len, mVersion.ptr, mVersion.len, mDesc.ptr, mDesc.len, caps, 5, configKey, 1]);

  const dispatch = tools
    .map((tool) => `(if (call $eq (local.get 0) (local.get 1) ${s(tool.name)}) (then ${tool.body}))`)
    .join('\n    ');
  const unknown = s('unknown tool');

  return `(module
  (import "chatty:plugin/logging@0.3.0" "log" (func $log (param i32 i32 i32 i32)))
  (import "chatty:plugin/config@0.3.0" "get" (func $config_get (param i32 i32 i32)))
  (import "chatty:plugin/file@0.3.0" "read-bytes" (func $read_bytes (param i32 i32 i32)))
  (import "chatty:plugin/llm@0.3.0" "complete" (func $llm_complete (param i32 i32 i32 i32 i32 i32 i32 i32)))
  (import "chatty:plugin/billing@0.3.0" "acquire-session" (func $acquire_session (param i64 i32)))
  (import "chatty:plugin/billing@0.3.0" "report-usage" (func $report_usage (param i64 i64 i32)))
  ${extraImports}
  (memory (export "memory") 1)
  ${extraDefs}
  (global $bump (mut i32) (i32.const ${HEAP}))

  (func $alloc (param $size i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    (local.set $p (i32.and (i32.add (global.get $bump) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $p) (local.get $size)))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then (if (i32.eq (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535)) (i32.const 16))) (i32.const -1))
        (then (unreachable)))))
    (global.set $bump (local.get $end))
    (local.get $p))

  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (call $alloc (local.get 3)))

  (func $eq (param $a i32) (param $alen i32) (param $b i32) (param $blen i32) (result i32)
    (local $i i32)
    (if (i32.ne (local.get $alen) (local.get $blen)) (then (return (i32.const 0))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $alen)))
        (if (i32.ne (i32.load8_u (i32.add (local.get $a) (local.get $i))) (i32.load8_u (i32.add (local.get $b) (local.get $i))))
          (then (return (i32.const 0))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.const 1))

  (func $parse_u64 (param $p i32) (param $len i32) (result i64)
    (local $i i32) (local $c i32) (local $n i64)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
        (local.set $c (i32.sub (i32.load8_u (i32.add (local.get $p) (local.get $i))) (i32.const 48)))
        (if (i32.lt_u (local.get $c) (i32.const 10))
          (then (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (local.get $c))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $n))

  (func $ok (param $ptr i32) (param $len i32) (result i32)
    (i32.store8 (i32.const ${RET}) (i32.const 0))
    (i32.store (i32.const ${RET + 4}) (local.get $ptr))
    (i32.store (i32.const ${RET + 8}) (local.get $len))
    (i32.store8 (i32.const ${RET + 12}) (i32.const 0))
    (i32.const ${RET}))

  (func $err (param $kind i32) (param $ptr i32) (param $len i32) (result i32)
    (i32.store8 (i32.const ${RET}) (i32.const 1))
    (i32.store8 (i32.const ${RET + 4}) (local.get $kind))
    (i32.store (i32.const ${RET + 8}) (local.get $ptr))
    (i32.store (i32.const ${RET + 12}) (local.get $len))
    (i32.const ${RET}))

  (func (export "${IFACE}#metadata") (result i32)
    (i32.const ${metaRet}))

  (func (export "${IFACE}#list-tools") (result i32)
    ${listToolsPrelude}
    (i32.const ${listRet}))

  (func (export "${IFACE}#invoke-tool") (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
    (local $deadline i64) (local $pages i32) (local $base i32) (local $i i32)
    ${dispatch}
    (call $err (i32.const 0) ${unknown}))

  (func (export "cabi_post_${IFACE}#invoke-tool") (param i32)
    (global.set $bump (i32.const ${HEAP})))

  ${data.segment()}
)`;
}

async function buildOtherWorld(): Promise<Uint8Array> {
  const wit = `package example:other@1.0.0;
interface greeter { greet: func() -> string; }
world other { export greeter; }`;
  const wat = `(module
  (memory (export "memory") 1)
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024))
  (func (export "example:other/greeter@1.0.0#greet") (result i32)
    (i32.store (i32.const 64) (i32.const 16))
    (i32.store (i32.const 68) (i32.const 5))
    (i32.const 64))
  (data (i32.const 16) "hello"))`;
  const core = await parse(wat);
  return componentNew(await componentEmbed({ binary: core, witSource: wit, world: 'other' }));
}

// ---------------------------------------------------------------------------------------------
// A registry over fixture modules, for tests that need loaded plugins (MCP routes included).

export interface FixtureModule {
  /** Directory and module name. */
  name: string;
  kind: FixtureKind;
  /** TOML appended to the manifest (`[resources]`, `[config]`, `[files]`…). */
  extra?: string;
  /** Files written below the module directory. */
  files?: Record<string, string | Uint8Array>;
}

export interface LoadedFixtures {
  registry: ModuleRegistry;
  root: string;
  report: ScanReport;
  /** Every line the registry logged, as `level message`. */
  logs: { level: string; message: string; fields?: Record<string, unknown> | undefined }[];
  close(): Promise<void>;
}

/**
 * The transpile cache of this test process: a fresh folder, removed as the process exits. Shared
 * by the registries of one test file, never by two files or two runs: a fixed path in /tmp was
 * shared by every run on the machine (two CI runs at once; another user's run was refused it: the
 * cache must be the user's own).
 */
export const TEST_CACHE_DIR = mkdtempSync(join(tmpdir(), 'chatty-gateway-test-plugin-cache-'));
process.once('exit', () => rmSync(TEST_CACHE_DIR, { recursive: true, force: true }));

/** Writes the modules into a fresh directory, scans it, and hands back the registry. */
export async function loadFixtures(modules: readonly FixtureModule[], options: ModuleRegistryOptions = {}): Promise<LoadedFixtures> {
  const root = mkdtempSync(join(tmpdir(), 'chatty-plugins-'));
  for (const m of modules) {
    writeModuleDir(root, m.name, {
      manifest: fixtureManifest(m.name, m.extra ?? ''),
      component: await buildFixture(m.kind),
      extra: m.files ?? {},
    });
  }
  const logs: LoadedFixtures['logs'] = [];
  const registry = new ModuleRegistry({
    cacheDir: TEST_CACHE_DIR,
    logger: { log: (level, message, fields) => logs.push({ level, message, fields }) },
    ...options,
  });
  const report = await registry.scanDirectory(root);
  return {
    registry,
    root,
    report,
    logs,
    async close() {
      await registry.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

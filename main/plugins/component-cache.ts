import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { currentUid, whyFolderChainOpen } from '../owner-only/index.js';
import { PluginLoadError } from './errors.js';
import { ownFile, ownFolder } from './own-files.js';
import { checkComponentNames } from './inspect/component-names.js';
import { capCoreModule, shapeOfCoreModule, type CoreModuleShape } from './inspect/core-limits.js';
import { MAX_TABLE_ENTRIES, PAGES_PER_MIB } from './limits.js';
import { spawnWorker } from './spawn.js';
import { ToolRecord } from './tool-record.js';
import type { GuestSandbox } from './worker/protocol.js';
import type { ToolchainReply, ToolchainRequest } from './worker/toolchain-entry.js';
import { parseComponentWorld, type ComponentWorld } from './world.js';
import { Wasm, type WasmModule } from './wasm-api.js';

/** Bumped when the cached layout or the way we transpile changes. */
const CACHE_FORMAT = 2;
const TOOLCHAIN_TIMEOUT_MS = 120_000;
const TOOLCHAIN_IDLE_MS = 5_000;

/** A component ready to instantiate: its world and, for plugins, jco's output on disk. */
export interface PreparedComponent {
  /** Content hash + transpiler version: the cache entry's name. */
  readonly key: string;
  readonly world: ComponentWorld;
  /** The cache entry's directory. */
  readonly dir: string;
  /** Whether there is a `component.mjs` (jco's `instantiate`): not when the component is not a plugin. */
  readonly plugin: boolean;
  /** The SHA-256 of each file the entry runs from, as written: checked again when it is used. */
  readonly sha256: Readonly<Record<string, string>>;
  /** jco's core module files, by the name its `getCoreModule` asks for. */
  readonly coreFiles: readonly string[];
  /** The core file each of jco's `instantiateCore` calls instantiates, in order (from its checked JavaScript). */
  readonly coreInstantiations: readonly string[];
  /** Whether the entry came from the disk cache. */
  readonly cached: boolean;
}

interface CacheMeta {
  format: number;
  /** The entry's own name: an entry renamed into another component's place is not that component's. */
  key?: string;
  transpiler: string;
  wit: string;
  coreFiles: string[];
  plugin: boolean;
  /** Each written file's SHA-256 (format 2): what is read when the engine starts must match. */
  sha256: Record<string, string>;
}

let transpilerVersionMemo: string | undefined;

/** `@bytecodealliance/jco-transpile`'s version (its package.json is not exported, so find it). */
export function transpilerVersion(): string {
  if (transpilerVersionMemo) return transpilerVersionMemo;
  let dir = dirname(createRequire(import.meta.url).resolve('@bytecodealliance/jco-transpile'));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      const parsed = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === '@bytecodealliance/jco-transpile' && parsed.version) return (transpilerVersionMemo = parsed.version);
    }
    const parent = dirname(dir);
    if (parent === dir) return (transpilerVersionMemo = 'unknown');
    dir = parent;
  }
}

/**
 * jco-transpile's output on disk, keyed by the component's SHA-256 and the transpiler's version,
 * plus the compiled (memory-capped) core modules in memory: transpile once per machine, compile
 * once per memory cap while some engine holds them (an idle plugin holds none, so they are
 * compiled again when its engine next starts), and what each load recorded of the component's
 * tools (`toolRecord`).
 */
export class ComponentCache {
  /** A compile under way, then a weak reference to its result: dropped once no engine uses it. */
  private readonly compiled = new Map<string, Promise<CompiledComponent> | WeakRef<CompiledComponent>>();
  /** The checked JavaScript's core instantiations, by cache key. */
  private readonly checkedJs = new Map<string, string[]>();
  private readonly toolchain = new Toolchain();

  /** `transpiler` overrides the installed jco-transpile version in the key (tests only). */
  constructor(
    readonly dir: string,
    private readonly options: { transpiler?: string } = {},
  ) {}

  /**
   * Checks the component's names (before anything is transpiled), transpiles it (or finds it in
   * the cache), and checks jco's JavaScript before anything runs it. The names are checked on
   * every load; the JavaScript once per entry and process, cached on disk or not (`entry`), its
   * bytes bound to that check by their hash (`readChecked` at each engine start).
   */
  async prepare(bytes: Uint8Array): Promise<PreparedComponent> {
    checkComponentNames(bytes);
    const transpiler = this.options.transpiler ?? transpilerVersion();
    const hash = createHash('sha256').update(bytes).digest('hex');
    const key = `${hash.slice(0, 32)}-jco${transpiler}-f${CACHE_FORMAT}`;
    const dir = join(this.ownTranspiledDir(), key);
    const cached = await readMeta(dir, key);
    if (cached) return this.entry(key, dir, cached, true);
    const reply = await this.toolchain.transpile(bytes);
    const meta: CacheMeta = { format: CACHE_FORMAT, key, transpiler, wit: reply.wit, coreFiles: [], plugin: reply.files !== null, sha256: {} };
    const tmp = `${dir}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
    await mkdir(tmp, { mode: 0o700 });
    for (const [name, content] of Object.entries(reply.files ?? {})) {
      if (name.endsWith('.d.ts')) continue;
      if (name.endsWith('.wasm')) meta.coreFiles.push(name);
      const target = name === 'component.js' ? 'component.mjs' : name;
      if (target.includes('/')) continue;
      meta.sha256[target] = sha256Of(content);
      await writeFile(join(tmp, target), content, { mode: 0o600 });
    }
    await writeFile(join(tmp, 'meta.json'), JSON.stringify(meta), { mode: 0o600 });
    await placeEntry(tmp, dir, key);
    const written = await readMeta(dir, key);
    if (!written) throw new PluginLoadError(`cannot write the transpile cache at ${dir}`);
    return this.entry(key, dir, written, false);
  }

  /**
   * A cache entry, its JavaScript checked: once per entry and process (twenty modules sharing one
   * component are checked once), on every load in a new process, cached on disk or not. The check
   * runs in the toolchain worker: parsing jco's JavaScript on this thread left ~3 MB of RSS per
   * component for the process's life (V8 and the C allocator keep what the parse grew into),
   * which goes with that short-lived thread (issue 21 item 1, docs/benchmarks.md "Memory").
   */
  private async entry(key: string, dir: string, meta: CacheMeta, cached: boolean): Promise<PreparedComponent> {
    let instantiations = this.checkedJs.get(key);
    if (!instantiations) {
      instantiations = meta.plugin ? await this.toolchain.checkJs(await readChecked(dir, 'component.mjs', meta.sha256), meta.coreFiles) : [];
      this.checkedJs.set(key, instantiations);
    }
    return preparedFrom(key, dir, meta, cached, instantiations);
  }

  /**
   * The component's core modules, compiled once per process and memory cap, with every memory and
   * table bounded so that all the instances the component creates together stay within the
   * plugin's budget: `max_memory_mb` and `MAX_TABLE_ENTRIES`, divided evenly among the memories
   * and tables its instantiations define (a module instantiated three times counts three times).
   */
  compile(prepared: PreparedComponent, maxMemoryMb: number): Promise<CompiledComponent> {
    const id = `${prepared.key}:${maxMemoryMb}`;
    const known = this.compiled.get(id);
    const alive = known instanceof WeakRef ? known.deref() : known;
    if (alive) return Promise.resolve(alive);
    const compiled = (async () => {
      // Used by path hours after the load checked it: the folders are checked again, and each
      // file's bytes against the hash recorded when it was written; what runs is what was read.
      this.ownTranspiledDir();
      const js = prepared.plugin ? (await readChecked(prepared.dir, 'component.mjs', prepared.sha256)).toString('utf8') : '';
      const files: Record<string, Uint8Array> = {};
      const perModule: Record<string, CoreModuleShape> = {};
      for (const name of prepared.coreFiles) {
        files[name] = await readChecked(prepared.dir, name, prepared.sha256);
        perModule[name] = shapeOfCoreModule(files[name], name);
      }
      const sandbox = planSandbox(prepared.coreInstantiations, perModule, maxMemoryMb);
      const modules: Record<string, WasmModule> = {};
      for (const [name, bytes] of Object.entries(files)) {
        const capped = capCoreModule(bytes, { memoryPages: sandbox.memoryPagesEach, tableEntries: sandbox.tableEntriesEach }, name);
        modules[name] = await Wasm.compile(capped);
      }
      return { modules, sandbox, componentUrl: `data:text/javascript;base64,${Buffer.from(js, 'utf8').toString('base64')}` };
    })();
    compiled.then(
      (done) => {
        if (this.compiled.get(id) === compiled) this.compiled.set(id, new WeakRef(done));
      },
      () => this.compiled.delete(id),
    );
    this.compiled.set(id, compiled);
    return compiled;
  }

  /**
   * `<cacheDir>/transpiled`, checked on every load and every engine start (a folder can change
   * between them): the cacheDir and transpiled/ are this user's and made 0700 (an older gateway
   * made the cacheDir under the umask, 0775 under umask 002: a group member could rename
   * transpiled/ aside and put their own there), and every folder above the cacheDir, up to `/`,
   * is this user's or root's and writable by nobody else unless sticky (owner-only's rule).
   * Refused otherwise, naming the folder. What others could have done in transpiled/ while it was
   * open is caught entry by entry (`readMeta`) and file by file (`readChecked`).
   */
  private ownTranspiledDir(): string {
    const uid = process.platform === 'win32' ? undefined : currentUid();
    const dir = join(this.dir, 'transpiled');
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new PluginLoadError(`cannot make the transpile cache ${dir}: ${(err as Error).message}`);
    }
    if (uid === undefined) return dir;
    const refuse = (why: string): never => {
      throw new PluginLoadError(`the transpile cache ${why}: someone else could put code there that would run as a plugin's; give the registry a cacheDir of your own (chmod 700 it, in folders only you may write)`);
    };
    for (const folder of [this.dir, dir]) {
      const st = lstatSync(folder);
      if (!st.isDirectory()) refuse(`${folder} is not a folder`);
      if (st.uid !== uid) refuse(`${folder} is owned by another user (uid ${st.uid})`);
      if ((st.mode & 0o077) !== 0) chmodSync(folder, 0o700);
    }
    // owner-only's one rule for a trusted folder: transpiled/ and every folder above it.
    const why = whyFolderChainOpen(dir, uid);
    if (why) refuse(`is not this user's alone: ${why}`);
    return dir;
  }

  /** Where a load records the component's tools, and finds what an earlier load recorded. */
  toolRecord(prepared: PreparedComponent): ToolRecord {
    return new ToolRecord(prepared.dir);
  }

  async close(): Promise<void> {
    await this.toolchain.close();
  }
}

/** Compiled core modules and the budgets they were capped to. */
export interface CompiledComponent {
  modules: Record<string, WasmModule>;
  sandbox: GuestSandbox;
  /** The hash-checked `component.mjs` as a `data:` URL: the worker imports these bytes, not the path. */
  componentUrl: string;
}

/** Divides the plugin's memory and table budgets among what its instantiations define. */
export function planSandbox(instantiations: readonly string[], perModule: Record<string, CoreModuleShape>, maxMemoryMb: number): GuestSandbox {
  let memories = 0;
  let tables = 0;
  for (const file of instantiations) {
    const shape = perModule[file];
    if (!shape) throw new PluginLoadError(`jco instantiates ${file}, which it did not write`);
    memories += shape.memories;
    tables += shape.tables;
  }
  const pages = maxMemoryMb * PAGES_PER_MIB;
  const memoryPagesEach = Math.floor(pages / Math.max(1, memories));
  if (memories > 0 && memoryPagesEach < 1) {
    throw new PluginLoadError(`the component creates ${memories} linear memories: max_memory_mb = ${maxMemoryMb} leaves less than a 64 KiB page for each`);
  }
  const tableEntriesEach = Math.floor(MAX_TABLE_ENTRIES / Math.max(1, tables));
  return { memories, tables, memoryPagesEach, tableEntriesEach, perModule };
}

/**
 * Entry `dir`'s meta, if its code may run as component `key`'s: the entry names itself `key` (not
 * another component's entry renamed into its place), and it and each file it runs from are this
 * user's own, a folder and regular files (no links) that nobody else may write (a file written
 * under umask 002 and replaced by a group member is not used). Otherwise `undefined`: transpiled
 * again, and the entry replaced (`placeEntry`).
 */
async function readMeta(dir: string, key: string): Promise<CacheMeta | undefined> {
  try {
    if (!ownFolder(await lstat(dir)) || !ownFile(await lstat(join(dir, 'meta.json')))) return undefined;
    const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as CacheMeta;
    if (meta.format !== CACHE_FORMAT || meta.key !== key || typeof meta.sha256 !== 'object' || meta.sha256 === null) return undefined;
    for (const file of [...(meta.plugin ? ['component.mjs'] : []), ...meta.coreFiles]) {
      if (file.includes('/') || !ownFile(await lstat(join(dir, file)))) return undefined;
    }
    return meta;
  } catch {
    return undefined;
  }
}

const sha256Of = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** File `name` of entry `dir`, refused unless its bytes are the ones written (`sha256`). */
async function readChecked(dir: string, name: string, sha256: Readonly<Record<string, string>>): Promise<Buffer> {
  const bytes = await readFile(join(dir, name)).catch((err: Error) => {
    throw new PluginLoadError(`cannot read ${name} of the transpile cache entry ${dir}: ${err.message}`);
  });
  if (sha256[name] === undefined || sha256Of(bytes) !== sha256[name]) {
    await discardEntry(dir); // so the next load transpiles afresh, as the refusal says
    throw new PluginLoadError(`${name} of the transpile cache entry ${dir} is not what was written there (its SHA-256 differs): refused; load the module again to transpile it afresh`);
  }
  return bytes;
}

/**
 * Moves the entry written at `tmp` to `dir`. An entry already there that `readMeta` accepts is a
 * concurrent load's (kept, `tmp` dropped); one it refuses is moved aside and removed first.
 */
async function placeEntry(tmp: string, dir: string, key: string): Promise<void> {
  try {
    await rename(tmp, dir);
    return;
  } catch {
    // something is there
  }
  if (await readMeta(dir, key)) {
    await rm(tmp, { recursive: true, force: true });
    return;
  }
  await discardEntry(dir);
  try {
    await rename(tmp, dir);
  } catch {
    await rm(tmp, { recursive: true, force: true }); // a concurrent load placed one meanwhile: readMeta judges it
  }
}

/** Moves entry `dir` aside and removes it: a load then finds no entry there and transpiles again. */
async function discardEntry(dir: string): Promise<void> {
  const aside = `${dir}.untrusted-${process.pid}-${Math.random().toString(16).slice(2)}`;
  await rename(dir, aside).catch(() => undefined);
  await rm(aside, { recursive: true, force: true });
}

/** jco's JavaScript is built from the component's own names: `coreInstantiations` come from its check. */
function preparedFrom(key: string, dir: string, meta: CacheMeta, cached: boolean, coreInstantiations: readonly string[]): PreparedComponent {
  return {
    key,
    dir,
    world: parseComponentWorld(meta.wit),
    plugin: meta.plugin,
    sha256: meta.sha256,
    coreFiles: meta.coreFiles,
    coreInstantiations,
    cached,
  };
}

/** The toolchain worker: started on the first cache miss or JavaScript check, stopped after a few idle seconds. */
class Toolchain {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(r: ToolchainReply): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  private idle: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  /** One transpile at a time, so a directory of big components does not hold them all at once. */
  async transpile(bytes: Uint8Array): Promise<Extract<ToolchainReply, { kind: 'transpile' }>> {
    const reply = await this.queued((id) => ({ id, kind: 'transpile', bytes }), 'transpiling');
    if (reply.kind !== 'transpile') throw new PluginLoadError('the transpiler answered another question');
    return reply;
  }

  /** jco's JavaScript (the text read and hash-checked), checked (`inspectTranspiledJs`): its core instantiations, or its refusal. */
  async checkJs(source: Buffer, coreFiles: readonly string[]): Promise<string[]> {
    const text = source.toString('utf8');
    const reply = await this.queued((id) => ({ id, kind: 'check-js', source: text, coreFiles: [...coreFiles] }), 'checking the transpiled JavaScript');
    if (reply.kind !== 'check-js') throw new PluginLoadError('the JavaScript check answered another question');
    return reply.coreInstantiations;
  }

  private queued(message: (id: number) => ToolchainRequest, what: string): Promise<Extract<ToolchainReply, { ok: true }>> {
    const next = this.chain.then(() => this.request(message(++this.nextId), what));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private request(message: ToolchainRequest, what: string): Promise<Extract<ToolchainReply, { ok: true }>> {
    clearTimeout(this.idle);
    const worker = this.ensure();
    const { id } = message;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        void this.close();
        reject(new PluginLoadError(`${what} took longer than ${TOOLCHAIN_TIMEOUT_MS / 1000} s`));
      }, TOOLCHAIN_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (reply) => {
          if (reply.ok) return resolve(reply);
          // The check's refusal, word for word, as when it ran on this thread.
          if (reply.refused && message.kind === 'check-js') return reject(new PluginLoadError(reply.error));
          // A component that made the transpiler fail may have left its WebAssembly trapped
          // ("cannot enter component instance"): the next component gets a fresh worker.
          void this.close();
          reject(new PluginLoadError(message.kind === 'check-js' ? `cannot check the transpiled JavaScript: ${reply.error}` : `cannot read the component: ${reply.error}`));
        },
        reject,
        timer,
      });
      worker.postMessage(message);
    });
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnWorker('toolchain-entry', {});
    worker.on('message', (reply: ToolchainReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      clearTimeout(waiter.timer);
      waiter.resolve(reply);
      if (this.pending.size === 0) {
        this.idle = setTimeout(() => void this.close(), TOOLCHAIN_IDLE_MS);
        this.idle.unref();
      }
    });
    const gone = (why: string): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const [id, waiter] of this.pending) {
        clearTimeout(waiter.timer);
        waiter.reject(new PluginLoadError(`the transpiler stopped: ${why}`));
        this.pending.delete(id);
      }
    };
    worker.on('error', (err) => gone(err.message));
    worker.on('exit', (code) => gone(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate().catch(() => undefined);
  }
}

import { receiveMessageOnPort } from 'node:worker_threads';
import { readBelowRoot } from './file-access.js';
import { NETWORK_REFUSAL_KEY } from '../network/refusal-key.js';
import { wasiHttp, type WasiHttpHost } from '../network/wasi-http.js';
import type { GrantState, GuestWorkerData, HostReply, LogLevel, LogSource } from './protocol.js';

type Tagged = { tag: 'ok'; val: unknown } | { tag: 'err'; val: string };

export interface HostSink {
  /**
   * One line to log. A guest's line (`guest`, `stdout`, `stderr`) comes as the guest gave it, of
   * any length: the sink asks the call's budget first and cuts and escapes only what it keeps.
   */
  log(level: LogLevel, message: string, source: LogSource): void;
  /** Posts a bridged call to the main thread. */
  post(message: { type: 'host'; seq: number; capability: 'llm' | 'billing'; method: string; args: unknown[] }): void;
  /**
   * The guest is handed its module's name, or a provider is asked (it is told the module): counted
   * (`NAME_TOLD`). A worker's sink must count; only a bench that records nothing leaves it out.
   */
  toldName?(): void;
}

/** A worker without the fetch side (benches): no refusal to tell. */
const NO_NETWORK = { takeRefusal: (): undefined => undefined };

/**
 * The `chatty:plugin/*` imports, as jco expects them (keyed by unversioned interface name). None
 * of them throws into the guest: every failure becomes the WIT `err` value (or `none`).
 * `llm` and `billing` block this worker on `Atomics.wait` while the main thread runs the
 * embedder's provider; the main thread itself never waits.
 */
export function chattyImports(data: GuestWorkerData, sink: HostSink, network: { takeRefusal(): string | undefined } = NO_NETWORK): Record<string, Record<string, unknown>> {
  const control = new Int32Array(data.control);
  let seq = 0;
  const warned = new Set<string>();
  const warnOnce = (text: string): void => {
    if (warned.has(text)) return;
    warned.add(text);
    sink.log('warn', text, 'host');
  };

  const bridge = (capability: 'llm' | 'billing', state: GrantState, method: string, args: unknown[]): Tagged => {
    if (state === 'not-granted') {
      sink.toldName?.();
      return { tag: 'err', val: `capability '${capability}' is not granted to module '${data.module}'` };
    }
    if (state === 'not-configured') {
      return { tag: 'err', val: `capability '${capability}' is not configured: the embedder provides no ${capability} provider` };
    }
    try {
      const id = ++seq;
      sink.toldName?.(); // the provider is told the module, and may answer with it
      Atomics.store(control, 0, 0);
      sink.post({ type: 'host', seq: id, capability, method, args });
      Atomics.wait(control, 0, 0);
      const reply = receiveMessageOnPort(data.hostPort)?.message as HostReply | undefined;
      if (!reply || reply.seq !== id) return { tag: 'err', val: `${capability}: the host lost the reply` };
      return reply.ok ? { tag: 'ok', val: reply.value } : { tag: 'err', val: reply.error };
    } catch (err) {
      return { tag: 'err', val: `${capability}: ${err instanceof Error ? err.message : String(err)}` };
    }
  };

  return {
    'chatty:plugin/types': {},
    'chatty:plugin/logging': {
      log(level: string, message: string): void {
        try {
          // The lift has already read it (bounded by the host-string limit); the sink cuts it to
          // a line's cap if its budget keeps it.
          sink.log(guestLevel(level.slice(0, 64)), message, 'guest');
        } catch {
          // a log line that cannot be posted is dropped, never thrown into the guest
        }
      },
    },
    'chatty:plugin/config': {
      get(key: string): string | undefined {
        if (key === NETWORK_REFUSAL_KEY) return network.takeRefusal();
        if (data.config === null) {
          warnOnce(`config.get: capability 'config' is not granted to module '${data.module}'`);
          return undefined;
        }
        return Object.hasOwn(data.config, key) ? data.config[key] : undefined;
      },
    },
    'chatty:plugin/file': {
      readBytes(path: string): Tagged {
        if (data.filesRoot === null) {
          sink.toldName?.();
          return { tag: 'err', val: `capability 'file' is not granted to module '${data.module}' (its module.toml has no [files] root)` };
        }
        try {
          return readBelowRoot(data.filesRoot, path, data.maxFileBytes);
        } catch (err) {
          return { tag: 'err', val: `file: ${err instanceof Error ? err.message : String(err)}` };
        }
      },
    },
    'chatty:plugin/llm': {
      complete(model: string, messages: unknown[], tools: string | undefined): Tagged {
        return bridge('llm', data.grants.llm, 'complete', [model, messages, tools]);
      },
    },
    'chatty:plugin/billing': {
      acquireSession(estimatedTokens: bigint): Tagged {
        return bridge('billing', data.grants.billing, 'acquire-session', [estimatedTokens]);
      },
      reportUsage(inputTokens: bigint, outputTokens: bigint): Tagged {
        return bridge('billing', data.grants.billing, 'report-usage', [inputTokens, outputTokens]);
      },
    },
  };
}

function guestLevel(level: string): LogLevel {
  switch (level.toLowerCase()) {
    case 'trace':
    case 'debug':
      return 'debug';
    case 'warn':
    case 'warning':
      return 'warn';
    case 'error':
    case 'fatal':
      return 'error';
    default:
      return 'info';
  }
}

/**
 * WASI's basics from preview2-shim, loaded only when the component imports them: an empty
 * environment, no arguments, no preopens, stdin at end of file, stdout/stderr to the log, and
 * `exit` failing the call instead of ending the thread.
 */
export async function wasiImports(names: readonly string[], sink: HostSink, network: WasiHttpHost): Promise<Record<string, unknown>> {
  if (names.length === 0) return {};
  const [cli, io, clocks, random, filesystem] = await Promise.all([
    import('@bytecodealliance/preview2-shim/cli'),
    import('@bytecodealliance/preview2-shim/io'),
    import('@bytecodealliance/preview2-shim/clocks'),
    import('@bytecodealliance/preview2-shim/random'),
    import('@bytecodealliance/preview2-shim/filesystem'),
  ]);
  const shimCli = cli as unknown as Record<string, unknown> & {
    _setEnv(env: Record<string, string>): void;
    _setArgs(args: string[]): void;
    _setCwd(cwd: string): void;
    _setStdout(s: unknown): void;
    _setStderr(s: unknown): void;
  };
  (filesystem as unknown as { _clearPreopens(): void })._clearPreopens();
  shimCli._setEnv({});
  shimCli._setArgs([]);
  shimCli._setCwd('/');
  const OutputStream = (io as unknown as { streams: { OutputStream: new () => object } }).streams.OutputStream;
  const logStream = (source: 'stdout' | 'stderr'): object => {
    let pending = '';
    const decoder = new TextDecoder();
    const flushLines = (final: boolean): void => {
      const lines = pending.split('\n');
      pending = final ? '' : (lines.pop() ?? '');
      for (const line of lines) if (line.length) sink.log(source === 'stderr' ? 'warn' : 'info', line, source);
    };
    class LogStream extends OutputStream {
      checkWrite(): bigint {
        return 65536n;
      }
      write(buf: Uint8Array): void {
        pending += decoder.decode(buf, { stream: true });
        if (pending.length > 64 * 1024) pending = pending.slice(-64 * 1024);
        flushLines(false);
      }
      blockingWriteAndFlush(buf: Uint8Array): void {
        this.write(buf);
      }
      flush(): void {}
      blockingFlush(): void {}
      [Symbol.dispose](): void {
        flushLines(true);
      }
    }
    return new LogStream();
  };
  // stdin is at end of file: a guest never reads the gateway's own standard input.
  const InputStream = (io as unknown as { streams: { InputStream: new () => object } }).streams.InputStream;
  const monotonic = (clocks as unknown as { monotonicClock: { subscribeDuration(ns: bigint): object } }).monotonicClock;
  class EmptyInput extends InputStream {
    read(): never {
      throw { tag: 'closed' };
    }
    blockingRead(): never {
      throw { tag: 'closed' };
    }
    skip(): never {
      throw { tag: 'closed' };
    }
    blockingSkip(): never {
      throw { tag: 'closed' };
    }
    subscribe(): object {
      return monotonic.subscribeDuration(0n); // always ready: reading says "closed" at once
    }
  }
  (shimCli as unknown as { _setStdin(s: unknown): void })._setStdin(new EmptyInput());
  shimCli._setStdout(logStream('stdout'));
  shimCli._setStderr(logStream('stderr'));
  const c = cli as unknown as Record<string, unknown>;
  const all: Record<string, unknown> = {
    'wasi:cli/environment': c['environment'],
    'wasi:cli/exit': {
      exit(status: { tag: string }): never {
        throw new Error(`the guest called wasi:cli/exit (${status.tag === 'err' ? 'failure' : 'success'})`);
      },
      exitWithCode(code: number): never {
        throw new Error(`the guest called wasi:cli/exit with code ${code}`);
      },
    },
    'wasi:cli/stdin': c['stdin'],
    'wasi:cli/stdout': c['stdout'],
    'wasi:cli/stderr': c['stderr'],
    'wasi:cli/terminal-input': c['terminalInput'],
    'wasi:cli/terminal-output': c['terminalOutput'],
    'wasi:cli/terminal-stdin': c['terminalStdin'],
    'wasi:cli/terminal-stdout': c['terminalStdout'],
    'wasi:cli/terminal-stderr': c['terminalStderr'],
    'wasi:io/error': (io as unknown as Record<string, unknown>)['error'],
    'wasi:io/streams': (io as unknown as Record<string, unknown>)['streams'],
    'wasi:io/poll': (io as unknown as Record<string, unknown>)['poll'],
    'wasi:clocks/wall-clock': (clocks as unknown as Record<string, unknown>)['wallClock'],
    'wasi:clocks/monotonic-clock': (clocks as unknown as Record<string, unknown>)['monotonicClock'],
    'wasi:random/random': (random as unknown as Record<string, unknown>)['random'],
    'wasi:random/insecure': (random as unknown as Record<string, unknown>)['insecure'],
    'wasi:random/insecure-seed': (random as unknown as Record<string, unknown>)['insecureSeed'],
    'wasi:filesystem/types': (filesystem as unknown as Record<string, unknown>)['types'],
    'wasi:filesystem/preopens': (filesystem as unknown as Record<string, unknown>)['preopens'],
  };
  // The guest's fetch, checked against the plugin's allow-list (plugins/network/): never preview2-shim's.
  Object.assign(all, wasiHttp({ InputStream, OutputStream, readyPollable: () => monotonic.subscribeDuration(0n) }, network));
  const out: Record<string, unknown> = {};
  for (const name of names) if (all[name] !== undefined) out[name] = all[name];
  return out;
}

/** At most `maxBytes` of UTF-8, cut on a character boundary. */
export function cutUtf8(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text; // cannot be over, whatever it holds
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text; // counted, not encoded: a line already cut comes back as it is
  const bytes = Buffer.from(text, 'utf8');
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * The toolchain worker: reads a component's world and transpiles it with jco-transpile, off the
 * main thread (jco's bindgen is itself WebAssembly and runs synchronously for the length of a
 * transpile). One request at a time; the registry keeps one of these while it loads modules.
 * It also checks jco's JavaScript (`check-js`): parsing 700 KB of it leaves ~3 MB of RSS per
 * component in the thread that does it, which goes when this short-lived thread ends.
 */
import { parentPort } from 'node:worker_threads';
import { PluginLoadError } from '../errors.js';
import { inspectTranspiledJs } from '../inspect/transpiled-js.js';

export type ToolchainRequest =
  | { id: number; kind: 'transpile'; bytes: Uint8Array }
  | { id: number; kind: 'check-js'; source: string; coreFiles: string[] };

export type ToolchainReply =
  | { id: number; ok: true; kind: 'transpile'; wit: string; files: Record<string, Uint8Array> | null }
  | { id: number; ok: true; kind: 'check-js'; coreInstantiations: string[] }
  /** `refused`: the check refused the JavaScript (its message is the refusal), not a failure to run it. */
  | { id: number; ok: false; error: string; refused?: boolean };

const port = parentPort!;
port.on('message', (req: ToolchainRequest) => {
  void (async (): Promise<ToolchainReply> => {
    try {
      if (req.kind === 'check-js') {
        const { coreInstantiations } = inspectTranspiledJs(req.source, req.coreFiles);
        return { id: req.id, ok: true, kind: 'check-js', coreInstantiations };
      }
      // Loaded on the first transpile only: jco's own WebAssembly is tens of MB a check does not need.
      const { componentWit } = await import('@bytecodealliance/jco-transpile/wasm-tools');
      const { transpileBytes } = await import('@bytecodealliance/jco-transpile');
      const wit = await componentWit(req.bytes);
      // Only a component that could be a plugin is worth transpiling.
      if (!/export\s+chatty:plugin\/plugin@/.test(wit)) return { id: req.id, ok: true, kind: 'transpile', wit, files: null };
      const { files } = await transpileBytes(req.bytes, { name: 'component', instantiation: 'async' });
      return { id: req.id, ok: true, kind: 'transpile', wit, files };
    } catch (err) {
      return { id: req.id, ok: false, error: err instanceof Error ? err.message : String(err), refused: err instanceof PluginLoadError };
    }
  })().then((reply) => port.postMessage(reply));
});

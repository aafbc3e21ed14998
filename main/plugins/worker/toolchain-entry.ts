/**
 * The toolchain worker: reads a component's world and transpiles it with jco-transpile, off the
 * main thread (jco's bindgen is itself WebAssembly and runs synchronously for the length of a
 * transpile). One request at a time; the registry keeps one of these while it loads modules.
 */
import { parentPort } from 'node:worker_threads';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { componentWit } from '@bytecodealliance/jco-transpile/wasm-tools';

export interface ToolchainRequest {
  id: number;
  bytes: Uint8Array;
}

export type ToolchainReply =
  | { id: number; ok: true; wit: string; files: Record<string, Uint8Array> | null }
  | { id: number; ok: false; error: string };

const port = parentPort!;
port.on('message', (req: ToolchainRequest) => {
  void (async (): Promise<ToolchainReply> => {
    try {
      const wit = await componentWit(req.bytes);
      // Only a component that could be a plugin is worth transpiling.
      if (!/export\s+chatty:plugin\/plugin@/.test(wit)) return { id: req.id, ok: true, wit, files: null };
      const { files } = await transpileBytes(req.bytes, { name: 'component', instantiation: 'async' });
      return { id: req.id, ok: true, wit, files };
    } catch (err) {
      return { id: req.id, ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  })().then((reply) => port.postMessage(reply));
});

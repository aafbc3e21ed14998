import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProtocolGateway, type ModuleDirectory, type ProtocolGatewayOptions } from '../../main/gateway/index.js';

/** A fresh private directory under the system temp dir, removed by the returned function. */
export function tempDir(prefix = 'chatty-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface RunningGateway {
  gateway: ProtocolGateway;
  socketPath: string;
  tokenPath: string;
  runtimeDir: string;
  auth: Record<string, string>;
  close: () => Promise<void>;
}

/** Starts a real gateway on a real Unix socket in a fresh owner-only runtime directory. */
export async function startGateway(
  modules: ModuleDirectory = { list: () => [] },
  options: ProtocolGatewayOptions = {},
): Promise<RunningGateway> {
  const dir = tempDir();
  const runtimeDir = join(dir.path, 'run');
  const gateway = new ProtocolGateway(modules, { ...options, runtimeDir });
  const { socketPath, tokenPath } = await gateway.start();
  return {
    gateway,
    socketPath,
    tokenPath,
    runtimeDir,
    auth: { authorization: `Bearer ${gateway.token()}` },
    close: async () => {
      await gateway.stop();
      dir.remove();
    },
  };
}

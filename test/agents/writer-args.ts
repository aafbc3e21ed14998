import { fileURLToPath } from 'node:url';

const WRITE_FILE = fileURLToPath(new URL('../../main/agents/scripted/write-file.ts', import.meta.url));
const WORKSPACE_PIN = fileURLToPath(new URL('../../main/agents/scripted/workspace-pin.ts', import.meta.url));

/** `node`'s arguments for a process that writes `size` bytes to `path` in `ws` as a worker does: the workspace pinned, then `commitWrite`. */
export function writerArgs(ws: string, path: string, size: number): string[] {
  const script = `
    const { commitWrite } = await import(${JSON.stringify(WRITE_FILE)});
    const { pinWorkspace } = await import(${JSON.stringify(WORKSPACE_PIN)});
    const ws = ${JSON.stringify(ws)};
    await pinWorkspace(ws);
    await commitWrite(ws, { path: ${JSON.stringify(path)}, file: ws + '/' + ${JSON.stringify(path)}, content: 'x'.repeat(${size}), diffStat: '+1 -1' });`;
  return ['--import', 'tsx', '--input-type=module', '-e', script];
}

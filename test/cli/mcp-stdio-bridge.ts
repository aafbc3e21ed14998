/** `mcp-stdio` run in this process on PassThrough streams, against a gateway's runtime dir: its lines in, its answers out. */
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { runMcpStdio } from '../../main/cli/commands/mcp-stdio.js';

export interface StdioAnswer {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

export function stdioBridge(runtimeDir: string, module: string) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let said = '';
  stderr.setEncoding('utf8').on('data', (c: string) => (said += c));
  const lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
  const code = runMcpStdio({ module, runtimeDir }, { stdin, stdout, stderr });
  return {
    /** Each message as one line. */
    write: (...messages: object[]) => stdin.write(messages.map((m) => `${JSON.stringify(m)}\n`).join('')),
    /** Text as it is (a hostile line the client writes by hand). */
    writeRaw: (text: string) => stdin.write(text),
    next: async (): Promise<StdioAnswer> => {
      const { value, done } = await lines.next();
      assert.ok(!done, 'the bridge closed stdout before answering');
      return JSON.parse(value as string) as StdioAnswer;
    },
    /** Ends stdin: the bridge's exit code and what it said on stderr. */
    finish: async () => {
      stdin.end();
      return { code: await code, stderr: said };
    },
  };
}

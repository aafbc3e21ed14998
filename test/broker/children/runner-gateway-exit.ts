/**
 * A gateway in a process of its own, for test/broker/runner-stdio.test.ts: one virtual agent whose
 * worker (`/bin/sh` starting `agent.ts`) first leaves a background `sleep 30` holding its stdout
 * and stderr (and writes that sleep's pid to argv[2]). It runs one task, stops the gateway, prints
 * `stopped`, and then has nothing left to do: the process must exit on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalRunner, ProtocolGateway } from '../../../main/index.js';

const pidFile = process.argv[2];
if (pidFile === undefined) throw new Error('usage: runner-gateway-exit.ts <file for the background pid>');
const agent = fileURLToPath(new URL('./agent.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');
const script = `sleep 30 0<&- 3>&- & echo $! > "$1"; exec "$2" --import "$3" "$4"`;
const runner = new LocalRunner({ command: '/bin/sh', args: ['-c', script, 'sh', pidFile, process.execPath, tsx, agent], reapGraceMs: 1_000 });
const runtimeDir = mkdtempSync(join(tmpdir(), 'chatty-exit-run-'));
const gateway = new ProtocolGateway({ list: () => [] }, { runtimeDir, broker: { log: () => {} } }).withVirtualAgent('holder', runner);
await gateway.start();
const result = await gateway.transport().invoke('holder', JSON.stringify({ echo: 'done' }));
await gateway.stop();
rmSync(runtimeDir, { recursive: true, force: true });
process.stdout.write(`stopped ${result.success ? 'after a task that succeeded' : `after a task that failed: ${result.response}`}\n`);

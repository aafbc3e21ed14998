/**
 * A gateway in a process of its own, for test/broker/participant-stdio.test.ts: one long-lived
 * participant (`openParticipant`) whose child (`/bin/sh` starting `agent.ts --serve-many`) first
 * leaves a background `sleep 30` holding its stdout and stderr (and writes that sleep's pid to
 * argv[2]). It runs one task on the participant, stops the gateway, prints `stopped`, and then has
 * nothing left to do: the process must exit on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProtocolGateway } from '../../../main/index.js';

const pidFile = process.argv[2];
if (pidFile === undefined) throw new Error('usage: participant-gateway-exit.ts <file for the background pid>');
const agent = fileURLToPath(new URL('./agent.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');
const script = `sleep 30 0<&- 3>&- & echo $! > "$1"; exec "$2" --import "$3" "$4" --serve-many`;
const runtimeDir = mkdtempSync(join(tmpdir(), 'chatty-exit-participant-'));
const gateway = new ProtocolGateway({ list: () => [] }, { runtimeDir, broker: { log: () => {} } });
await gateway.start();
const opened = await gateway.openParticipant('holder', '/bin/sh', ['-c', script, 'sh', pidFile, process.execPath, tsx, agent]);
const result = await gateway.transport().invoke(opened.node.name, JSON.stringify({ echo: 'done' }));
await gateway.stop();
rmSync(runtimeDir, { recursive: true, force: true });
process.stdout.write(`stopped ${result.success ? 'after a task that succeeded' : `after a task that failed: ${result.response}`}\n`);

/**
 * The worker a `LocalRunner` starts is its caller's choice: the broker's runner takes a command
 * and names no worker of its own; the package root's `LocalRunner` supplies this package's worker
 * when none is given (test/agents/default-worker.test.ts runs it).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LocalRunner, type LocalRunnerOptions } from '../../main/broker/runners/index.js';
import { Directory, ParticipantRegistry } from '../../main/fabric/index.js';
import type { Report } from './children/where-worker.js';

const BROKER = fileURLToPath(new URL('../../main/broker/', import.meta.url));
const AGENTS = fileURLToPath(new URL('../../main/agents/', import.meta.url));
const WORKER = fileURLToPath(new URL('./children/where-worker.ts', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

it('the broker\'s LocalRunner without a command is refused, naming where the default worker comes from', () => {
  assert.throws(() => new LocalRunner({} as LocalRunnerOptions), {
    message: "LocalRunner needs the worker's command (e.g. `new LocalRunner(defaultWorker())` with `defaultWorker` from the package root)",
  });
});

it('nothing in main/broker imports main/agents: the default worker is the composition\'s', () => {
  const upward: string[] = [];
  for (const file of sources(BROKER)) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)) {
      if (specifier!.startsWith('.') && resolve(file, '..', specifier!).startsWith(AGENTS)) upward.push(`${relative(BROKER, file)} → ${specifier}`);
    }
  }
  assert.deepEqual(upward, []);
});

it('extraEnv is set on top of the environment the worker is given', async () => {
  const runner = new LocalRunner({ command: process.execPath, args: ['--import', import.meta.resolve('tsx'), WORKER, 'report'], env: { PATH: process.env['PATH'], RUNNER_TEST: 'given' }, extraEnv: { RUNNER_TEST: 'on top' } });
  const worker = await runner.start({ spec: 'env', spawnContext: { roster: [] }, connection: { directory: new Directory(), registry: new ParticipantRegistry() } });
  try {
    const texts: string[] = [];
    const task = await worker.connection.runTask({ taskId: 'where', text: 'where are you?', spawnContext: worker.spawnContext }, (event) => {
      if (event.kind === 'artifact') texts.push(event.text);
    });
    assert.equal((await task.outcome).state, 'completed');
    assert.equal((JSON.parse(texts.join('')) as Report).env.RUNNER_TEST, 'on top');
  } finally {
    await worker.stop(1000);
  }
});

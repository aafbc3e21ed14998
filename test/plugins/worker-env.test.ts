/**
 * A module's worker runs guest code (and jco's JavaScript, generated from the guest's own names),
 * so it must not see the host's environment: tokens and keys live there. The real guest worker
 * is started on a stand-in "component" that reports `process.env` the only way guest-entry lets
 * a component speak before it is ready: an Error whose message guest-entry posts as `init-failed`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel, SHARE_ENV, type WorkerOptions } from 'node:worker_threads';
import { after, before, describe, it } from 'node:test';
import { spawnWorker } from '../../main/plugins/spawn.js';
import { CallChannel } from '../../main/plugins/worker/call-channel.js';
import type { FromWorker, GuestWorkerData } from '../../main/plugins/worker/protocol.js';

const SECRET_NAME = 'CHATTY_TEST_SECRET_TOKEN';
const SECRET_VALUE = `s3cret-${process.pid}-${Date.now()}`;

describe('the module worker\'s environment', () => {
  let dir: string;
  let componentUrl: string;

  before(() => {
    process.env[SECRET_NAME] = SECRET_VALUE;
    dir = mkdtempSync(join(tmpdir(), 'chatty-env-'));
    const file = join(dir, 'component.mjs');
    // Everything the worker can see: its environment, and the secret looked up by name.
    writeFileSync(file, `throw new Error(JSON.stringify({ env: process.env, secret: process.env[${JSON.stringify(SECRET_NAME)}] ?? null }));\n`);
    componentUrl = pathToFileURL(file).href;
  });
  after(() => {
    delete process.env[SECRET_NAME];
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the real guest worker on the stand-in component and returns what it reported. */
  const envSeenByGuest = async (extra: Partial<WorkerOptions> = {}): Promise<{ env: Record<string, string>; secret: string | null }> => {
    const host = new MessageChannel();
    const calls = new MessageChannel();
    const data: GuestWorkerData = {
      module: 'env-probe',
      componentUrl,
      coreModules: {},
      wasiImports: [],
      config: null,
      filesRoot: null,
      grants: { llm: 'not-granted', billing: 'not-granted' },
      network: null,
      maxOutputBytes: 1024,
      maxMemoryBytes: 1024 * 1024,
      maxLogBytes: 1024,
      maxFileBytes: 1024,
      sandbox: { memories: 1, tables: 1, memoryPagesEach: 16, tableEntriesEach: 1024, perModule: {} },
      control: new SharedArrayBuffer(4),
      hostPort: host.port2,
      channel: CallChannel.create().sab,
      callPort: calls.port2,
    };
    const worker = spawnWorker('guest-entry', { ...extra, workerData: data, transferList: [host.port2, calls.port2] });
    try {
      const msg = await new Promise<FromWorker>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) without reporting`)));
      });
      assert.equal(msg.type, 'init-failed', `expected the probe's report, got ${JSON.stringify(msg)}`);
      return JSON.parse((msg as { message: string }).message) as { env: Record<string, string>; secret: string | null };
    } finally {
      host.port1.close();
      calls.port1.close();
      await worker.terminate();
    }
  };

  it('is empty: the host\'s secret variable is not there, nor anything else', async () => {
    assert.equal(process.env[SECRET_NAME], SECRET_VALUE, 'the test process has the secret');
    const seen = await envSeenByGuest();
    assert.equal(seen.secret, null);
    assert.deepEqual(seen.env, {});
    assert.ok(!JSON.stringify(seen).includes(SECRET_VALUE));
  });

  it('stays empty even when a caller asks to share or copy the host\'s environment', async () => {
    const asked: WorkerOptions['env'][] = [SHARE_ENV, process.env, { [SECRET_NAME]: SECRET_VALUE }];
    for (const env of asked) {
      const seen = await envSeenByGuest({ env });
      assert.equal(seen.secret, null);
      assert.deepEqual(seen.env, {});
    }
  });
});

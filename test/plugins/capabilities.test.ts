import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LlmRequest, ModuleHandle, ToolOutcome } from '../../main/plugins/index.js';
import { loadFixtures, type LoadedFixtures } from '../helpers/wasm-fixtures.js';

const run = (handle: ModuleHandle, name: string, argumentsJson: string): Promise<ToolOutcome> =>
  handle.invokeTool({ name, argumentsJson, callId: `${name}-1` });
const ok = (content: string): ToolOutcome => ({ ok: true, value: { content, usage: undefined } });
const failed = (message: RegExp) => (outcome: ToolOutcome) => {
  assert.equal(outcome.ok, false, JSON.stringify(outcome));
  if (outcome.ok) return;
  assert.equal(outcome.error.kind, 'failed');
  assert.match(outcome.error.message, message);
};

describe('host capabilities', () => {
  let fx: LoadedFixtures;
  let llmRequests: LlmRequest[];
  const get = (name: string): ModuleHandle => fx.registry.get(name)!;

  before(async () => {
    llmRequests = [];
    fx = await loadFixtures(
      [
        {
          name: 'files',
          kind: 'echo',
          extra: '[config]\ngreeting = "hello"\n[files]\nroot = "data"\n',
          files: { 'data/note.txt': 'a note', 'data/sub/deep.txt': 'deep', 'secret.txt': 'outside the root' },
        },
        { name: 'bare', kind: 'echo' },
        { name: 'no-llm', kind: 'echo' },
      ],
      {
        providers: {
          llm: {
            complete(request) {
              llmRequests.push(request);
              if (request.model === 'broken') throw new Error('the model is down');
              if (request.model === 'invalid') return { content: 42 } as never;
              return new Promise((resolve) => setTimeout(() => resolve({ content: `echo: ${request.messages[0]?.content ?? ''}`, usage: { inputTokens: 3, outputTokens: 4 } }), 20));
            },
          },
        },
        grant: ({ name, manifest }) => {
          const caps: ('logging' | 'llm' | 'billing' | 'config' | 'file')[] = ['logging', 'billing'];
          if (name !== 'no-llm') caps.push('llm');
          if (Object.keys(manifest.config).length) caps.push('config');
          if (manifest.files) caps.push('file');
          return caps;
        },
      },
    );
    assert.deepEqual(fx.report.failed, []);
    const data = join(fx.root, 'files', 'data');
    symlinkSync(join(fx.root, 'files', 'secret.txt'), join(data, 'escape.txt'));
    symlinkSync('/etc', join(data, 'etc'));
    symlinkSync(join(data, 'note.txt'), join(data, 'inside-link.txt'));
    mkdirSync(join(data, 'dir'));
    execFileSync('mkfifo', [join(data, 'fifo')]);
  });
  after(() => fx.close());

  describe('config', () => {
    it('reads the manifest\'s [config]', async () => {
      assert.deepEqual(await run(get('files'), 'config', 'greeting'), ok('hello'));
      failed(/^none$/)(await run(get('files'), 'config', 'missing'));
    });
    it('answers none when not granted, and says so in the log', async () => {
      failed(/^none$/)(await run(get('bare'), 'config', 'greeting'));
      assert.ok(fx.logs.some((l) => /capability 'config' is not granted to module 'bare'/.test(l.message)));
    });
  });

  describe('file', () => {
    it('reads a regular file below the root', async () => {
      assert.deepEqual(await run(get('files'), 'read', 'note.txt'), ok('a note'));
      assert.deepEqual(await run(get('files'), 'read', 'sub/deep.txt'), ok('deep'));
      assert.deepEqual(await run(get('files'), 'read', './sub/deep.txt'), ok('deep'));
      assert.deepEqual(await run(get('files'), 'read', 'inside-link.txt'), ok('a note'));
    });
    it('refuses ../, absolute paths, drive letters and backslashes', async () => {
      failed(/"\.\." is refused/)(await run(get('files'), 'read', '../secret.txt'));
      failed(/"\.\." is refused/)(await run(get('files'), 'read', 'sub/../../secret.txt'));
      failed(/absolute paths are refused/)(await run(get('files'), 'read', '/etc/passwd'));
      failed(/absolute paths are refused/)(await run(get('files'), 'read', join(fx.root, 'files', 'secret.txt')));
      failed(/drive letters are refused/)(await run(get('files'), 'read', 'C:/Windows/win.ini'));
      failed(/"\\" is refused/)(await run(get('files'), 'read', 'sub\\deep.txt'));
    });
    it('refuses symlinks whose real path leaves the root', async () => {
      failed(/leaves the \[files\] root/)(await run(get('files'), 'read', 'escape.txt'));
      failed(/leaves the \[files\] root/)(await run(get('files'), 'read', 'etc/passwd'));
    });
    it('refuses non-regular files and missing ones', async () => {
      failed(/not a regular file/)(await run(get('files'), 'read', 'dir'));
      failed(/not a regular file/)(await run(get('files'), 'read', 'fifo'));
      failed(/not a regular file/)(await run(get('files'), 'read', ''));
      failed(/no such file/)(await run(get('files'), 'read', 'nothing.txt'));
    });
    it('answers an error naming the capability when not granted', async () => {
      failed(/capability 'file' is not granted to module 'bare'/)(await run(get('bare'), 'read', 'note.txt'));
    });
  });

  describe('llm', () => {
    it('delegates to the provider without blocking the main thread', async () => {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 1);
      const outcome = await run(get('files'), 'llm', 'small-model');
      clearInterval(ticker);
      assert.deepEqual(outcome, ok('echo: small-model'));
      assert.ok(ticks > 0, 'the main thread kept running while the guest waited');
      const request = llmRequests.at(-1)!;
      assert.equal(request.module, 'files');
      assert.equal(request.model, 'small-model');
      assert.deepEqual(request.messages, [{ role: 'user', content: 'small-model', toolCalls: [], toolCallId: undefined }]);
      assert.equal(request.tools, undefined);
    });
    it('turns a provider failure or a bad answer into the guest\'s err', async () => {
      failed(/^llm: the model is down$/)(await run(get('files'), 'llm', 'broken'));
      failed(/^llm: the provider returned an invalid completion$/)(await run(get('files'), 'llm', 'invalid'));
      assert.deepEqual(await run(get('files'), 'echo', '"still fine"'), ok('"still fine"'));
    });
    it('answers an error naming the capability when not granted', async () => {
      failed(/capability 'llm' is not granted to module 'no-llm'/)(await run(get('no-llm'), 'llm', 'm'));
      assert.ok(!llmRequests.some((r) => r.module === 'no-llm'), 'the provider never saw the ungranted call');
    });
  });

  describe('billing', () => {
    it('answers not configured when the embedder passed no provider', async () => {
      failed(/capability 'billing' is not configured/)(await run(get('files'), 'billing', '{}'));
      failed(/capability 'billing' is not configured/)(await run(get('files'), 'usage', '{}'));
    });
  });

  describe('logging', () => {
    it('is always granted and reaches the log with the module name', async () => {
      assert.deepEqual(await run(get('bare'), 'log', 'a guest line'), ok(''));
      const line = fx.logs.find((l) => l.message === 'a guest line');
      assert.ok(line);
      assert.equal(line.level, 'info');
      assert.deepEqual(line.fields, { module: 'bare', source: 'guest' });
    });
    it('cuts a huge message to 64 KiB before the host reads it', async () => {
      const huge = 'x'.repeat(200_000);
      assert.deepEqual(await run(get('bare'), 'log', huge), ok(''));
      const line = fx.logs.find((l) => l.message.startsWith('xxxx'));
      assert.ok(line);
      assert.equal(line.message.length, 64 * 1024);
    });
  });
});

describe('llm and billing without a grant or a provider', () => {
  it('answers not configured (llm, no provider) and not granted (billing, refused by the grant), naming each', async () => {
    let billed = 0;
    const fx = await loadFixtures([{ name: 'p', kind: 'echo' }], {
      providers: {
        billing: {
          acquireSession: () => {
            billed++;
            return { token: 't', balanceTokens: 1, reservedTokens: 1, pricingModel: 'flat' };
          },
          reportUsage: () => {
            billed++;
          },
        },
      },
      grant: () => ['logging', 'llm'],
    });
    try {
      const p = fx.registry.get('p')!;
      failed(/^capability 'llm' is not configured: the embedder provides no llm provider$/)(await run(p, 'llm', 'm'));
      failed(/^capability 'billing' is not granted to module 'p'$/)(await run(p, 'billing', '{}'));
      failed(/^capability 'billing' is not granted to module 'p'$/)(await run(p, 'usage', '{}'));
      assert.equal(billed, 0);
    } finally {
      await fx.close();
    }
  });
});

describe('billing with a provider', () => {
  it('acquires a session and reports usage through the provider', async () => {
    const reported: [bigint, bigint][] = [];
    const fx = await loadFixtures([{ name: 'payer', kind: 'echo' }], {
      providers: {
        billing: {
          acquireSession: ({ estimatedTokens }) => ({ token: `tok-${estimatedTokens}`, balanceTokens: 1000, reservedTokens: estimatedTokens, pricingModel: 'flat' }),
          async reportUsage({ inputTokens, outputTokens }) {
            reported.push([inputTokens, outputTokens]);
          },
        },
      },
    });
    try {
      const payer = fx.registry.get('payer')!;
      assert.deepEqual(await run(payer, 'billing', '{}'), ok('tok-100'));
      assert.deepEqual(await run(payer, 'usage', '{}'), ok(''));
      assert.deepEqual(reported, [[3n, 4n]]);
    } finally {
      await fx.close();
    }
  });
});

describe('a host import never throws into the guest', () => {
  it('a provider that throws synchronously is an err, and the instance survives', async () => {
    const fx = await loadFixtures([{ name: 'p', kind: 'echo' }], {
      providers: {
        billing: {
          acquireSession() {
            throw new TypeError('boom');
          },
          reportUsage() {
            return Promise.reject(new Error('ledger closed'));
          },
        },
      },
    });
    try {
      const p = fx.registry.get('p')!;
      failed(/^billing: boom$/)(await run(p, 'billing', '{}'));
      failed(/^billing: ledger closed$/)(await run(p, 'usage', '{}'));
      assert.equal(p.stats.traps, 0);
    } finally {
      await fx.close();
    }
  });
});

describe('WASI basics', () => {
  it('an empty environment, no preopens, and stdout to the log', async () => {
    const fx = await loadFixtures([{ name: 'wasi', kind: 'wasi' }]);
    try {
      assert.deepEqual(fx.report.failed, []);
      const wasi = fx.registry.get('wasi')!;
      assert.deepEqual(await run(wasi, 'env', '{}'), ok(''), 'no environment variables');
      assert.deepEqual(await run(wasi, 'preopens', '{}'), ok(''), 'no preopened directories');
      assert.deepEqual(await run(wasi, 'stdout', 'a line on stdout\n'), ok(''));
      const line = fx.logs.find((l) => l.message === 'a line on stdout');
      assert.ok(line, JSON.stringify(fx.logs));
      assert.equal(line.level, 'info');
      assert.deepEqual(line.fields, { module: 'wasi', source: 'stdout' });
    } finally {
      await fx.close();
    }
  });
});

/**
 * The record of a component's tools (`ToolRecord`) is made for one module: a second module with
 * the same bytes and the same context (config, grants, files root, network, limits) is another
 * module all the same, and the host tells it its own name (the llm provider is asked for it, a
 * refused capability's error names it). A list that follows what the module is told was shown,
 * for the second, as the first recorded it. A load whose engine was never told its module's name
 * (no provider asked, no refusal naming it) records for the bytes in that context whatever the
 * name: another module of them then starts no engine at its load.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModuleRegistryOptions } from '../../main/plugins/index.js';
import { loadFixtures } from '../helpers/wasm-fixtures.js';

/** An llm provider whose answer names the module that asked. */
const options: ModuleRegistryOptions = {
  providers: { llm: { complete: ({ module }) => ({ content: `tools of ${module}` }) } },
};

async function described(module: string, fx: Awaited<ReturnType<typeof loadFixtures>>): Promise<string | undefined> {
  const tools = await fx.registry.get(module)!.listTools();
  return tools.find((t) => t.name === 'named')?.description;
}

describe('the record of a module\'s tools is its own, not that of another module of the same bytes', () => {
  it('a module loaded after another of the same bytes (a new registry, the same cache) lists what it was told', async () => {
    const first = await loadFixtures([{ name: 'first', kind: 'named-tools' }], options);
    try {
      assert.deepEqual(first.report.failed, []);
      assert.equal(await described('first', first), 'tools of first');
    } finally {
      await first.close();
    }
    const second = await loadFixtures([{ name: 'second', kind: 'named-tools' }], options);
    try {
      assert.deepEqual(second.report.failed, []);
      assert.equal(await described('second', second), 'tools of second');
      assert.equal(second.registry.get('second')!.stats.engineStarts, 1, 'its load listed the tools with its engine');
    } finally {
      await second.close();
    }
  });

  it('two modules of the same bytes in one registry each list their own; a later load of each finds its own record', async () => {
    for (let round = 0; round < 2; round++) {
      const fx = await loadFixtures([{ name: 'left', kind: 'named-tools' }, { name: 'right', kind: 'named-tools' }], options);
      try {
        assert.deepEqual(fx.report.failed, []);
        assert.equal(await described('left', fx), 'tools of left');
        assert.equal(await described('right', fx), 'tools of right');
        if (round === 1) for (const m of ['left', 'right']) assert.equal(fx.registry.get(m)!.stats.engineStarts, 0, `${m}: its own record`);
      } finally {
        await fx.close();
      }
    }
  });
});

describe("a load never told its module's name records the tools for every module of the same bytes", () => {
  it('a second module of the same bytes and context, its list-tools asking the host nothing, starts no engine at its load', async () => {
    const first = await loadFixtures([{ name: 'plain-first', kind: 'echo' }]);
    let tools: unknown;
    try {
      assert.deepEqual(first.report.failed, []);
      assert.equal(first.registry.get('plain-first')!.stats.engineStarts, 1, 'the first load of these bytes lists with its engine');
      tools = await first.registry.get('plain-first')!.listTools();
    } finally {
      await first.close();
    }
    const second = await loadFixtures([{ name: 'plain-second', kind: 'echo' }]);
    try {
      assert.deepEqual(second.report.failed, []);
      const handle = second.registry.get('plain-second')!;
      assert.equal(handle.stats.engineStarts, 0, "the first's record: its guest was never told a name");
      assert.deepEqual(await handle.listTools(), tools);
      assert.deepEqual(await handle.invokeTool({ name: 'echo', argumentsJson: '"x"', callId: 'x' }), { ok: true, value: { content: '"x"', usage: undefined } });
    } finally {
      await second.close();
    }
  });

  it('a host answer that does not name the module (no llm provider) is the same for every name: shared too', async () => {
    const first = await loadFixtures([{ name: 'unconfigured-first', kind: 'named-tools' }]);
    try {
      assert.deepEqual(first.report.failed, []);
      assert.match((await described('unconfigured-first', first)) ?? '', /^capability 'llm' is not configured/);
    } finally {
      await first.close();
    }
    const second = await loadFixtures([{ name: 'unconfigured-second', kind: 'named-tools' }]);
    try {
      assert.deepEqual(second.report.failed, []);
      assert.match((await described('unconfigured-second', second)) ?? '', /^capability 'llm' is not configured/);
      assert.equal(second.registry.get('unconfigured-second')!.stats.engineStarts, 0);
    } finally {
      await second.close();
    }
  });

  it("told its name by a refusal (llm not granted), each module lists its own", async () => {
    const llmRefused: ModuleRegistryOptions = { grant: () => ['logging'] };
    for (const name of ['refused-first', 'refused-second']) {
      const fx = await loadFixtures([{ name, kind: 'named-tools' }], llmRefused);
      try {
        assert.deepEqual(fx.report.failed, []);
        assert.equal(await described(name, fx), `capability 'llm' is not granted to module '${name}'`);
        assert.equal(fx.registry.get(name)!.stats.engineStarts, 1, 'its own load listed its tools');
      } finally {
        await fx.close();
      }
    }
  });
});

// The plugin list against modules that misbehave: an embedder's directory (ModuleDirectory is
// public) whose module never answers `listTools`, beside one that answers. The feed is driven by
// the directory's own onChange, its pushes recorded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ModuleListFeed } from '../../main/app/bridge/module-list.js';
import { ModuleListSchema, type ModuleList } from '../../main/app/bridge/contract.js';
import type { CallableModule, ModuleDirectory } from '../../main/gateway/modules.js';

function module(name: string, listTools: CallableModule['listTools']): CallableModule {
  return {
    name,
    version: '1.0.0',
    description: name,
    protocols: { mcp: true, a2a: false },
    listTools,
    invokeTool: () => Promise.reject(new Error('not called here')),
  };
}

test('a module whose listTools never answers does not hold the list back: it is listed with a toolsError, the others with their tools, and later changes are pushed too', { timeout: 180_000 }, async () => {
  const modules = [
    module('stuck', () => new Promise(() => {})),
    module('fine', () => Promise.resolve([{ name: 'echo', description: 'says it back', parametersSchema: '{}' }])),
  ];
  let hear: (change: { name: string; change: 'served' | 'reloaded' | 'unloaded' | 'pending' }) => void = () => {};
  const directory: ModuleDirectory = {
    list: () => modules,
    get: (name) => modules.find((m) => m.name === name),
    onChange: (listener) => {
      hear = listener;
      return () => {};
    },
  };
  const lists: ModuleList[] = [];
  let heard: () => void = () => {};
  const feed = new ModuleListFeed(directory, (list) => {
    lists.push(ModuleListSchema.parse(list));
    heard();
  }, () => {}, 50);
  feed.start();
  const next = (): Promise<void> => new Promise((resolve) => (heard = resolve));

  let pushed = next();
  hear({ name: 'fine', change: 'served' });
  await pushed;
  const [stuck, fine] = lists[0]!.modules;
  assert.equal(stuck!.name, 'stuck');
  assert.deepEqual(stuck!.tools, []);
  assert.match(stuck!.toolsError ?? '', /did not list its tools within 50 ms/);
  assert.deepEqual(fine!.tools, [{ name: 'echo', description: 'says it back' }]);

  pushed = next();
  hear({ name: 'fine', change: 'reloaded' });
  await pushed;
  assert.deepEqual(lists[1]!.changes, [{ name: 'fine', change: 'reloaded' }]);
});

test('a module whose tools are not {name, description} strings loses only its own tools: the list still goes, with a toolsError for it', { timeout: 180_000 }, async () => {
  const bad = module('bad', () => Promise.resolve([{ name: 'odd', description: undefined, parametersSchema: '{}' } as unknown as { name: string; description: string; parametersSchema: string }]));
  const fine = module('fine', () => Promise.resolve([{ name: 'echo', description: 'says it back', parametersSchema: '{}' }]));
  let hear: (change: { name: string; change: 'served' }) => void = () => {};
  const directory: ModuleDirectory = {
    list: () => [bad, fine],
    get: (name) => [bad, fine].find((m) => m.name === name),
    onChange: (listener) => {
      hear = listener;
      return () => {};
    },
  };
  const logged: string[] = [];
  const pushed = new Promise<ModuleList>((resolve) => new ModuleListFeed(directory, resolve, (line) => logged.push(line)).start());
  hear({ name: 'bad', change: 'served' });
  const list = ModuleListSchema.parse(await pushed);
  assert.deepEqual(list.modules.map((m) => [m.name, m.tools.length, m.toolsError === undefined]), [['bad', 0, false], ['fine', 1, true]]);
  assert.match(list.modules[0]!.toolsError ?? '', /tools\[0\]\.description/);
  assert.deepEqual(logged, []);
});

/**
 * The `plugin new` template as a plugin author grows it (found by a new user, issue 20): a tool
 * that uses `fetch` is async, so the template's `invokeTool` must await its `run`; and a plugin
 * whose `invokeTool` hands back an unawaited Promise as `content` is told to await it. One
 * componentize-js build of the template (cached by its sources).
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, ensureExamplesBuilt, type ModuleHandle } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR } from '../helpers/wasm-fixtures.js';

const TEMPLATE = new URL('../../examples/plugins/template/', import.meta.url);

/** The author's additions to the template's TOOLS: an async tool, and one the plugin returns unawaited. */
const ADDED_TOOLS = `const TOOLS = {
  later: {
    description: 'Answers after awaiting, as a tool that fetches does.',
    schema: { type: 'object', properties: { name: { type: 'string' } } },
    async run(args) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return 'later, ' + args.name;
    },
  },
  unawaited: { description: 'Returned without await by the invokeTool below.', schema: {}, run() { return ''; } },`;

/** An invokeTool of the author's that forgets to await (what the template did before). */
const UNAWAITED = `
const templateInvoke = plugin.invokeTool;
plugin.invokeTool = (call) => (call.name === 'unawaited' ? { content: Promise.resolve('late') } : templateInvoke.call(plugin, call));
`;

describe('the plugin new template, grown by its author', () => {
  let root: string;
  let registry: ModuleRegistry;
  let handle: ModuleHandle;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'chatty-template-async-'));
    const dir = join(root, 'template');
    cpSync(TEMPLATE, dir, { recursive: true });
    const source = readFileSync(join(dir, 'src', 'plugin.js'), 'utf8');
    assert.ok(source.includes('const TOOLS = {'), 'the template keeps its tools in TOOLS');
    writeFileSync(join(dir, 'src', 'plugin.js'), source.replace('const TOOLS = {', ADDED_TOOLS) + UNAWAITED);
    const modulesDir = await ensureExamplesBuilt(root, { cacheDir: join(root, '.examples-cache'), exclude: [] }); // this run's own: never shared with another run
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log() {} } });
    await registry.scanDirectory(modulesDir);
    handle = registry.get('template')!;
  });
  after(async () => {
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const call = (name: string, args: object = {}) => handle.invokeTool({ name, argumentsJson: JSON.stringify(args), callId: name });

  it("an async tool added to the template's TOOLS answers with what it resolved to", async () => {
    assert.ok(handle, 'the template is loaded');
    assert.deepEqual(await call('later', { name: 'Ada' }), { ok: true, value: { content: 'later, Ada', usage: undefined } });
    assert.deepEqual(await call('greet', { name: 'Bo' }), { ok: true, value: { content: 'Hello, Bo!', usage: undefined } });
  });

  it('content that is an unawaited Promise is a failed tool-error that says to await it', async () => {
    const result = await call('unawaited');
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.error.kind === 'failed', JSON.stringify(result));
    assert.match(!result.ok ? result.error.message : '', /^invokeTool returned content that is a Promise; await it: `return \{ content: await … \}` in an `async invokeTool`$/);
  });
});

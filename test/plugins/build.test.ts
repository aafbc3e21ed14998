import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginCallError, PluginLoadError, buildPlugin, ensureExamplesBuilt, examplesDir, findPluginSource, newPlugin, type LogLevel, type ModuleHandle } from '../../main/plugins/index.js';
import { checkPluginSource } from '../../main/plugins/build/source-check.js';
import { TEST_CACHE_DIR } from '../helpers/wasm-fixtures.js';

const WIT = readFileSync(new URL('../../main/plugins/wit/plugin.wit', import.meta.url), 'utf8');

describe('plugin new', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-new-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('copies the template under the new name, with the WIT and a .gitignore that git honours', async () => {
    const dir = await newPlugin('word-tool', root);
    assert.equal(dir, join(root, 'word-tool'));
    assert.match(readFileSync(join(dir, 'module.toml'), 'utf8'), /name = "word-tool"/);
    assert.match(readFileSync(join(dir, 'src', 'plugin.js'), 'utf8'), /const NAME = 'word-tool';/);
    assert.equal(readFileSync(join(dir, 'wit', 'plugin.wit'), 'utf8'), WIT);
    assert.equal(existsSync(join(dir, 'plugin.wasm')), false);
    assert.equal(existsSync(join(dir, 'gitignore')), false, 'the template stores it without the dot; the copy has the dot');

    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'plugin.wasm'), 'built');
    const ignored = execFileSync('git', ['-C', dir, 'check-ignore', 'plugin.wasm', '.chatty-build-entry-0a1b2c.js'], { encoding: 'utf8' });
    assert.deepEqual(ignored.trim().split('\n'), ['plugin.wasm', '.chatty-build-entry-0a1b2c.js']);
    const status = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=all'], { encoding: 'utf8' });
    assert.doesNotMatch(status, /plugin\.wasm/);
    assert.match(status, /\?\? src\/plugin\.js/);
  });

  it('takes a path relative to the parent; the last component is the module name', async () => {
    const dir = await newPlugin('./plugins/nested/hello', root);
    assert.ok(isAbsolute(dir));
    assert.equal(dir, join(root, 'plugins', 'nested', 'hello'));
    assert.match(readFileSync(join(dir, 'module.toml'), 'utf8'), /name = "hello"/);
    assert.match(readFileSync(join(dir, 'src', 'plugin.js'), 'utf8'), /const NAME = 'hello';/);
    assert.ok(existsSync(join(dir, '.gitignore')));

    const sibling = await newPlugin('../beside', join(root, 'plugins'));
    assert.equal(sibling, join(root, 'beside'));
    assert.match(readFileSync(join(sibling, 'module.toml'), 'utf8'), /name = "beside"/);
  });

  it('refuses an existing directory and a module name that cannot be a URL segment', async () => {
    await assert.rejects(newPlugin('word-tool', root), (err: unknown) => err instanceof PluginLoadError && /already exists/.test(err.message));
    for (const bad of ['bad name', 'plugins/..', 'plugins/.hidden', '-dash', 'a/b c']) {
      await assert.rejects(newPlugin(bad, root), (err: unknown) => err instanceof PluginLoadError && /plugin name/.test(err.message), bad);
    }
    assert.deepEqual(readdirSync(root).sort(), ['beside', 'plugins', 'word-tool']);
  });
});

/** A plugin directory with the given files, for the checks that run before componentize-js. */
function pluginWith(root: string, name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'module.toml'), `[module]\nname = "${name}"\nversion = "0.1.0"\nwasm = "plugin.wasm"\n`);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  return dir;
}

const MINIMAL = `export const plugin = { metadata() {}, listTools() { return []; }, invokeTool() { return { content: '' }; } };\n`;

describe('plugin build checks the JavaScript before componentize-js', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-check-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  async function refused(dir: string): Promise<string> {
    let message = '';
    await assert.rejects(buildPlugin(dir), (err: unknown) => {
      assert.ok(err instanceof PluginLoadError, String(err));
      message = err.message;
      return true;
    });
    assert.deepEqual(readdirSync(dir).filter((f) => f !== 'module.toml' && f !== 'src'), [], 'nothing is written: no component, no wrapper');
    return message;
  }

  it('a syntax error names the file, line and column, and shows the line', async () => {
    const dir = pluginWith(root, 'syntax', { 'src/plugin.js': `// one\nexport const plugin = {\n  invokeTool(call) { return { content: call.name + } },\n};\n` });
    const line = '  invokeTool(call) { return { content: call.name + } },';
    const column = line.indexOf('+ }') + 2; // the "}" where an operand should be, from 0
    assert.deepEqual((await refused(dir)).split('\n'), [`src/plugin.js:3:${column + 1}: Unexpected token`, `  ${line}`, `  ${' '.repeat(column)}^`]);
  });

  it('a syntax error in an imported file names that file', async () => {
    const dir = pluginWith(root, 'imported', {
      'src/plugin.js': `import { helper } from './lib/helper.js';\nimport data from './data.json' with { type: 'json' };\n${MINIMAL}`,
      'src/data.json': '{"not": "javascript"}',
    });
    mkdirSync(join(dir, 'src', 'lib'));
    writeFileSync(join(dir, 'src', 'lib', 'helper.js'), `export function helper() {\n  return 1 +* 2;\n}\n`);
    assert.match(await refused(dir), /^src\/lib\/helper\.js:2:13: Unexpected token\n/);
  });

  it('imports: a missing file, an npm package, a path out of the plugin, a host interface at the wrong version', async () => {
    const cases: Array<[string, RegExp]> = [
      [`import { x } from './nowhere.js';\n`, /^src\/plugin\.js:1:19: import "\.\/nowhere\.js": no such file \(src\/nowhere\.js\)$/],
      [`\nimport _ from 'lodash';\n`, /^src\/plugin\.js:2:15: import "lodash": a plugin imports only its own files .*bundle npm packages/],
      [`export * from '../../outside.js';\n`, /^src\/plugin\.js:1:15: import "\.\.\/\.\.\/outside\.js" leaves the plugin directory /],
      [`import { log } from 'chatty:plugin/logging@0.2.0';\n`, /^src\/plugin\.js:1:21: import "chatty:plugin\/logging@0\.2\.0": the host provides chatty:plugin\/types@0\.3\.0, /],
    ];
    for (const [i, [head, expected]] of cases.entries()) {
      assert.match(await refused(pluginWith(root, `imports-${i}`, { 'src/plugin.js': head + MINIMAL })), expected);
    }
  });

  it('the bundled examples and the template pass the check', () => {
    for (const name of ['json-tools', 'text-tools', 'template']) {
      const dir = join(examplesDir(), name);
      assert.doesNotThrow(() => checkPluginSource(findPluginSource(dir), dir), name);
    }
  });

  it('a module that does not export `plugin`', async () => {
    const dir = pluginWith(root, 'no-export', { 'src/plugin.js': `export const plugins = {};\n` });
    assert.match(await refused(dir), /^src\/plugin\.js does not export `plugin`/);
  });
});

/**
 * The template, kept verbatim as `src/template.js`, behind a `src/plugin.js` that adds tools which
 * misbehave the ways plugin authors do. One componentize-js build serves every assertion below.
 */
const BEHAVIOUR_PLUGIN = `import { plugin as template } from './template.js';
import { readBytes } from 'chatty:plugin/file@0.3.0';
import { get as configGet } from 'chatty:plugin/config@0.3.0';

console.log('at build time'); // runs while componentize-js initialises the engine
let brokenByCall = '';

const EXTRA = {
  'break-list-tools': (how) => {
    brokenByCall = how;
    return { content: 'the next listTools() misbehaves' };
  },
  'throw-error': () => { throw new Error('the disk is on fire'); },
  'throw-type-error': () => null.property,
  'throw-string': () => { throw 'just a string'; },
  'host-refusal': () => ({ content: new TextDecoder().decode(readBytes('anything.json')) }),
  'throw-denied': () => { throw { kind: 'denied', message: 'not for you' }; },
  'throw-bad-kind': () => { throw { kind: 'oops', message: 'odd' }; },
  'return-number': () => 42,
  'return-promise': async () => ({ content: 'late' }),
  'return-object-content': () => ({ content: { a: 1 } }),
  'return-usage': () => ({ content: 'counted', usage: { inputTokens: 3, outputTokens: 4 } }),
  console: () => {
    console.log('hello', { a: 1 }, 42);
    console.warn('careful');
    console.error(new Error('bad thing'));
    console.debug('details');
    console.dir({ b: 2 });
    console.assert(1 === 1, 'not logged');
    console.assert(1 === 2, 'one is', 2);
    console.count();
    console.group('g');
    console.groupEnd();
    console.time('t');
    console.timeEnd('t');
    console.table([1]);
    return { content: 'logged' };
  },
  now: () => ({ content: String(Date.now()) }),
  random: () => {
    const bytes = new Uint8Array(8);
    crypto.getRandomValues(bytes);
    return { content: JSON.stringify({ math: Math.random(), bytes: Array.from(bytes) }) };
  },
};

export const plugin = {
  metadata: () => template.metadata(),
  listTools: () => {
    // Broken by a call (for the instance), or by the module's [config] (from its load on).
    const listToolsBroken = brokenByCall || configGet('break_list_tools') || '';
    if (listToolsBroken === 'throw') throw new Error('the list is broken');
    if (listToolsBroken === 'object-schema') return [{ name: 'greet', description: 'Greets.', parametersSchema: { type: 'object' } }];
    return [
    ...template.listTools(),
    ...Object.keys(EXTRA).map((name) => ({ name, description: name, parametersSchema: '{"type":"object"}' })),
    ];
  },
  invokeTool(call) {
    return EXTRA[call.name] ? EXTRA[call.name](JSON.parse(call.argumentsJson).how) : template.invokeTool(call);
  },
};
`;

interface LogLine {
  level: LogLevel;
  message: string;
  fields: Record<string, unknown> | undefined;
}

describe('a plugin built with plugin build (one componentize-js build)', () => {
  let root: string;
  let modulesDir: string;
  let registry: ModuleRegistry;
  let handle: ModuleHandle;
  const lines: LogLine[] = [];
  const progress: string[] = [];
  let authored: string;

  const startedIn = process.cwd();

  before(async () => {
    // Built from `/`, as an app started from Finder or by systemd is: componentize-js once cut
    // the entry's path wrongly there.
    process.chdir('/');
    root = mkdtempSync(join(tmpdir(), 'chatty-build-'));
    authored = join(root, 'authored');
    const dir = await newPlugin('behaviour', authored);
    renameSync(join(dir, 'src', 'plugin.js'), join(dir, 'src', 'template.js'));
    writeFileSync(join(dir, 'src', 'plugin.js'), BEHAVIOUR_PLUGIN);
    modulesDir = await ensureExamplesBuilt(authored, { cacheDir: join(root, 'examples-cache'), onProgress: (l) => progress.push(l) });
    registry = new ModuleRegistry({
      cacheDir: TEST_CACHE_DIR,
      logger: { log: (level, message, fields) => lines.push({ level, message, fields }) },
    });
    const report = await registry.scanDirectory(modulesDir);
    assert.deepEqual(report.failed, []);
    handle = registry.get('behaviour')!;
  });
  after(async () => {
    process.chdir(startedIn);
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const call = (name: string, argumentsJson = '{}') => handle.invokeTool({ name, argumentsJson, callId: name });

  it('ensureExamplesBuilt built it once into the cache, left the source tree alone, and reuses the build', async () => {
    assert.equal(progress.length, 1);
    const built = join(modulesDir, 'behaviour', 'plugin.wasm');
    assert.ok(statSync(built).size > 1024 * 1024);
    const sourceDir = join(authored, 'behaviour');
    assert.deepEqual(readdirSync(sourceDir).sort(), ['.gitignore', 'README.md', 'module.toml', 'src', 'wit'], 'no component, no leftover wrapper');
    const firstBuild = statSync(built).mtimeMs;
    assert.equal(await ensureExamplesBuilt(authored, { cacheDir: join(root, 'examples-cache'), onProgress: (l) => progress.push(l) }), modulesDir);
    assert.equal(progress.length, 1);
    assert.equal(statSync(built).mtimeMs, firstBuild);
  });

  it('the template inside it still answers, and its tool-errors pass through unchanged', async () => {
    assert.equal((await handle.metadata()).name, 'behaviour');
    assert.deepEqual((await handle.listTools()).map((t) => t.name).slice(0, 2), ['greet', 'break-list-tools']);
    assert.deepEqual(await call('greet', '{"name":"Ada"}'), { ok: true, value: { content: 'Hello, Ada!', usage: undefined } });
    assert.deepEqual(await call('greet', '{}'), { ok: false, error: { kind: 'invalid-arguments', message: '`name` must be a non-empty string' } });
    assert.deepEqual(await call('greet', 'nope'), { ok: false, error: { kind: 'invalid-arguments', message: 'arguments are not JSON' } });
    assert.deepEqual(await call('throw-denied'), { ok: false, error: { kind: 'denied', message: 'not for you' } });
    assert.deepEqual(await call('return-usage'), { ok: true, value: { content: 'counted', usage: { inputTokens: 3, outputTokens: 4 } } });
  });

  it('an ordinary exception becomes a failed tool-error carrying its message', async () => {
    assert.deepEqual(await call('throw-error'), { ok: false, error: { kind: 'failed', message: 'the disk is on fire' } });
    assert.deepEqual(await call('throw-string'), { ok: false, error: { kind: 'failed', message: 'just a string' } });
    const typeError = await call('throw-type-error');
    assert.equal(typeError.ok, false);
    assert.ok(!typeError.ok && typeError.error.kind === 'failed' && /^TypeError: /.test(typeError.error.message), JSON.stringify(typeError));
    // The module has no [files] root: the host's refusal, thrown into the guest, is passed on.
    assert.deepEqual(await call('host-refusal'), {
      ok: false,
      error: { kind: 'failed', message: "capability 'file' is not granted to module 'behaviour' (its module.toml has no [files] root)" },
    });
    assert.deepEqual(await call('throw-bad-kind'), {
      ok: false,
      error: { kind: 'failed', message: 'odd (the plugin threw a tool-error of kind "oops"; kinds are unknown-tool, invalid-arguments, denied, failed)' },
    });
    // The instance survived all of that: nothing trapped.
    assert.deepEqual(await call('greet', '{"name":"Bo"}'), { ok: true, value: { content: 'Hello, Bo!', usage: undefined } });
  });

  it('an ill-typed return becomes a failed tool-error saying what came back', async () => {
    assert.deepEqual(await call('return-number'), {
      ok: false,
      error: { kind: 'failed', message: 'invokeTool returned a number (42); it must return { content: string }' },
    });
    // An async invokeTool is awaited (issue 20 item 5; test/plugins/async-tools.test.ts).
    assert.deepEqual(await call('return-promise'), { ok: true, value: { content: 'late', usage: undefined } });
    assert.deepEqual(await call('return-object-content'), {
      ok: false,
      error: { kind: 'failed', message: 'invokeTool returned content that is an object; content must be a string (JSON.stringify an object)' },
    });
  });

  it('console.* become log lines of the module', async () => {
    const from = lines.length;
    assert.deepEqual(await call('console'), { ok: true, value: { content: 'logged', usage: undefined } });
    const logged = lines.slice(from).map(({ level, message, fields }) => [level, message, fields?.['module'], fields?.['source']]);
    assert.deepEqual(logged, [
      ['info', 'hello {"a":1} 42', 'behaviour', 'guest'],
      ['warn', 'careful', 'behaviour', 'guest'],
      ['error', 'bad thing', 'behaviour', 'guest'],
      ['debug', 'details', 'behaviour', 'guest'],
      ['info', '{"b":2}', 'behaviour', 'guest'],
      ['error', 'Assertion failed: one is 2', 'behaviour', 'guest'],
    ]);
  });

  it('why listTools() failed at load is logged before its trap, nothing is recorded, and each tools/list asks the engine again; console at the top level went nowhere', async () => {
    assert.ok(!lines.some((l) => l.message.includes('at build time')), 'the build-time console line is not replayed');
    const cases: Array<[string, string]> = [
      ['throw', 'listTools() threw: the list is broken'],
      ['object-schema', 'listTools() tool "greet": parametersSchema is an object; it must be a string (JSON.stringify the schema)'],
    ];
    for (const [how, expected] of cases) {
      // The same component, whose [config] breaks its list from the load on (tools/list answers from
      // what a load recorded, so a list broken later by a call is never asked).
      const dir = join(root, `broken-${how}`);
      cpSync(join(modulesDir, 'behaviour'), join(dir, 'behaviour'), { recursive: true });
      const toml = join(dir, 'behaviour', 'module.toml');
      writeFileSync(toml, readFileSync(toml, 'utf8').replace('[config]\n', `[config]\nbreak_list_tools = "${how}"\n`));
      const own: LogLine[] = [];
      const guestLines = (from = 0) => own.slice(from).filter((l) => l.fields?.['source'] === 'guest').map((l) => [l.level, l.message]);
      const broken = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: (level, message, fields) => own.push({ level, message, fields }) } });
      try {
        assert.deepEqual((await broken.scanDirectory(dir)).failed, [], 'a list that traps does not stop the load');
        assert.deepEqual(guestLines(), [['error', expected]], `${how}: logged at load`);
        const from = own.length;
        await assert.rejects(broken.get('behaviour')!.listTools(), (err: unknown) => err instanceof PluginCallError && err.kind === 'trap');
        assert.deepEqual(guestLines(from), [['error', expected]], `${how}: nothing was recorded, so tools/list asked the engine`);
      } finally {
        await broken.close();
      }
    }
  });

  it('Date.now() is the time of the call, not of the build', async () => {
    const before = Date.now();
    const answer = await call('now');
    const after = Date.now();
    assert.ok(answer.ok);
    const now = Number(answer.value.content);
    assert.ok(now >= before && now <= after, `${now} not in [${before}, ${after}]`);
  });

  it('Math.random() and crypto.getRandomValues differ between instances (not replayed from the build)', async () => {
    const first = await call('random');
    const other = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log() {} } });
    try {
      assert.deepEqual((await other.scanDirectory(modulesDir)).failed, []);
      const second = await other.get('behaviour')!.invokeTool({ name: 'random', argumentsJson: '{}', callId: 'r2' });
      assert.ok(first.ok && second.ok);
      const a = JSON.parse(first.value.content) as { math: number; bytes: number[] };
      const b = JSON.parse(second.value.content) as { math: number; bytes: number[] };
      assert.notEqual(a.math, b.math);
      assert.notDeepEqual(a.bytes, b.bytes);
    } finally {
      await other.close();
    }
  });
});

/**
 * The check on jco's generated JavaScript: real jco output (hand-written fixtures and a
 * componentize-js plugin) passes and yields its core instantiations; code pasted in the way a
 * hostile component name breaks out of a string literal is refused, naming what and where.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { PluginLoadError, ensureExamplesBuilt } from '../../main/plugins/index.js';
import { inspectTranspiledJs } from '../../main/plugins/inspect/transpiled-js.js';
import { buildFixture, type FixtureKind } from '../helpers/wasm-fixtures.js';

interface Transpiled {
  source: string;
  coreFiles: string[];
}

async function transpile(bytes: Uint8Array): Promise<Transpiled> {
  const { files } = await transpileBytes(bytes, { name: 'component', instantiation: 'async' });
  const js = files['component.js'];
  assert.ok(js, 'jco wrote component.js');
  return { source: new TextDecoder().decode(js), coreFiles: Object.keys(files).filter((f) => f.endsWith('.wasm')).sort() };
}

/** The built examples of this run (not the user's own cache, nor one another run shares). */
const EXAMPLES_CACHE = mkdtempSync(join(tmpdir(), 'chatty-transpiled-js-'));
after(() => rmSync(EXAMPLES_CACHE, { recursive: true, force: true }));

const refused = (source: string, coreFiles: readonly string[], why: RegExp): string => {
  let message = '';
  assert.throws(() => inspectTranspiledJs(source, coreFiles), (err: unknown) => {
    assert.ok(err instanceof PluginLoadError, `not a PluginLoadError: ${String(err)}`);
    message = err.message;
    assert.match(err.message, why);
    return true;
  });
  return message;
};

describe('jco output that passes', () => {
  const expected: Record<string, string[]> = {
    echo: ['component.core2.wasm', 'component.core.wasm', 'component.core3.wasm'],
    wasi: ['component.core2.wasm', 'component.core.wasm', 'component.core3.wasm'],
    hostile: ['component.core2.wasm', 'component.core.wasm', 'component.core3.wasm'],
    slow: ['component.core2.wasm', 'component.core.wasm', 'component.core3.wasm'],
  };
  for (const [kind, list] of Object.entries(expected)) {
    it(`the '${kind}' fixture: accepted, with its instantiateCore calls in source order`, async () => {
      const { source, coreFiles } = await transpile(await buildFixture(kind as FixtureKind));
      assert.deepEqual(inspectTranspiledJs(source, coreFiles), { coreInstantiations: list });
    });
  }

  it('a component that instantiates one core module three times lists it three times', async () => {
    const component = await parse(`(component
      (core module $m (memory (export "mem") 1) (table (export "t") 1 funcref))
      (core instance (instantiate $m))
      (core instance (instantiate $m))
      (core instance (instantiate $m)))`);
    const { source, coreFiles } = await transpile(component);
    assert.deepEqual(coreFiles, ['component.core.wasm']);
    assert.deepEqual(inspectTranspiledJs(source, coreFiles).coreInstantiations, ['component.core.wasm', 'component.core.wasm', 'component.core.wasm']);
  });

  it('a componentize-js plugin (the json-tools example) is accepted, each core module listed once', async () => {
    const modules = await ensureExamplesBuilt(undefined, { exclude: ['template', 'text-tools'], cacheDir: EXAMPLES_CACHE });
    const { source, coreFiles } = await transpile(readFileSync(join(modules, 'json-tools', 'plugin.wasm')));
    const { coreInstantiations } = inspectTranspiledJs(source, coreFiles);
    assert.deepEqual([...coreInstantiations].sort(), coreFiles);
    // The same order as the calls in the text.
    const inText = [...source.matchAll(/instantiateCore\(yield (module\d+)/g)].map((m) => {
      const decl = new RegExp(`const ${m[1]} = getCoreModule\\('([^']+)'\\)`).exec(source);
      return decl?.[1];
    });
    assert.deepEqual(coreInstantiations, inText);
  });

  it('the report does not keep the checked text alive (a cache holds reports for the process\'s life)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { source, coreFiles } = await transpile(await buildFixture('echo'));
    const used = (): number => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = used();
    // Ten distinct 2 MB texts, as ten components' JavaScript: kept, they would be 20 MB or more.
    const kept = Array.from({ length: 10 }, (_, i) => inspectTranspiledJs(`${source}\n// ${'x'.repeat(2 * 2 ** 20)}${i}`, coreFiles));
    const grew = used() - before;
    assert.equal(kept.length, 10);
    assert.ok(grew < 4 * 2 ** 20, `the reports keep ${(grew / 2 ** 20).toFixed(1)} MB`);
  });
});

describe('code pasted into jco output is refused', () => {
  let echo: Transpiled;
  /** The core export name jco pastes between quotes, as a hostile component would name it. */
  const NAME = "exports1['cabi_post_chatty:plugin/plugin@0.3.0#invoke-tool']";

  before(async () => {
    echo = await transpile(await buildFixture('echo'));
    assert.ok(echo.source.includes(NAME), 'the echo output has the name this test breaks out of');
    inspectTranspiledJs(echo.source, echo.coreFiles); // and passes untouched
  });

  /** jco's output with `exports1['<name>']` where <name> is `x'] ?? (<payload>), ['x`. */
  const breakout = (payload: string): string => echo.source.replace(NAME, `exports1['x'] ?? (${payload}), ['x']`);
  const lineOf = (source: string, needle: string): number => source.slice(0, source.indexOf(needle)).split('\n').length;

  const cases: [string, string, RegExp][] = [
    ['a dynamic import', "import('node:fs')", /a dynamic import\(\)/],
    ['import.meta', 'import.meta.url', /import\.meta/],
    ['process', "process.binding('fs')", /the global 'process'/],
    ['globalThis with a computed name', "globalThis['pro' + 'cess']", /^(?=.*the global 'globalThis')(?=.*a property name built at run time)/],
    ['global', 'global.process', /the global 'global'/],
    ['self', 'self.postMessage(1)', /the global 'self'/],
    ['require', "require('node:child_process')", /the global 'require'/],
    ['module', 'module.exports', /the global 'module'/],
    ['indirect eval', "(0, eval)('process')", /the global 'eval'/],
    ['new Function', "new Function('return process')()", /the global 'Function'/],
    ['Function called', "Function('return process')()", /the global 'Function'/],
    ['.constructor.constructor', "[].constructor.constructor('return process')()", /access to \.constructor/],
    ["['constructor'] by literal", "(() => {})['constructor']('return process')()", /access to \.constructor/],
    ['a built constructor name', "(() => {})['constr' + 'uctor']('return process')()", /a property name built at run time/],
    ['a template-built name', "(() => {})[`constr${'uctor'}`]('return 1')()", /a property name built at run time/],
    ['a name decoded from bytes', "(() => {})[new TextDecoder().decode(new Uint8Array([99, 111, 110, 115, 116, 114, 117, 99, 116, 111, 114]))]('return 1')()",
      /a property name computed by call expression/],
    ['a name chosen by a conditional', "(() => {})[1 ? 'x' : 'y']", /a property name computed by conditional expression/],
    ['a name from a sequence', "(() => {})[(0, 'x')]", /a property name computed by sequence expression/],
    ['__proto__', '({}).__proto__', /access to \.__proto__/],
    ['Object reflection', 'Object.getPrototypeOf(async () => {})', /Object\.getPrototypeOf/],
    ['Object as a value', 'Object', /Object used other than as Object\.<member>/],
    ['Reflect', "Reflect.get(() => {}, 'x')", /the global 'Reflect'/],
    ['fetch', "fetch('http://127.0.0.1:1/')", /the global 'fetch'/],
    ['a WebAssembly instance of its own', 'new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(8)))', /WebAssembly\.Instance.*WebAssembly\.Module/],
    ['a WebAssembly memory of its own', 'new WebAssembly.Memory({ initial: 65536 })', /WebAssembly\.Memory/],
    ['WebAssembly.instantiate', 'WebAssembly.instantiate(new Uint8Array(8))', /WebAssembly\.instantiate/],
    ['WebAssembly by computed name', "WebAssembly['Memory']", /WebAssembly used other than as WebAssembly\.<member>/],
    ['an arrow function running any of it', '(() => { const p = process; return p.env; })()', /the global 'process'/],
    ['the preamble\'s fs slot', "_fs.readFile('/etc/passwd')", /a reference to jco's preamble '_fs' outside it/],
    ['the preamble\'s fetchCompile', "fetchCompile('/etc/passwd')", /a reference to jco's preamble 'fetchCompile' outside it/],
    ['replacing getCoreModule', 'getCoreModule = null', /getCoreModule used other than/],
    ['calling instantiate again', 'instantiate(getCoreModule, imports)', /a reference to instantiate\(\) inside its own module/],
    ['handing instantiateCore on', 'Promise.resolve(instantiateCore)', /instantiateCore used other than called/],
    ['replacing the host imports', "imports['chatty:plugin/file'] = {}", /imports used other than read/],
  ];
  for (const [what, payload, why] of cases) {
    it(`${what}: ${payload}`, () => {
      const source = breakout(payload);
      const message = refused(source, echo.coreFiles, why);
      // Named where it was pasted.
      assert.match(message, new RegExp(` at ${lineOf(source, "exports1['x'] ??")}:\\d+`));
    });
  }

  it('in instantiate() itself, where an import name is pasted, `arguments[2]` (instantiateCore by another name) is refused', () => {
    const IMPORT = "imports['chatty:plugin/billing']";
    assert.ok(echo.source.includes(IMPORT));
    const atTop = (payload: string): string => echo.source.replace(IMPORT, `${IMPORT} ?? (${payload})`);
    refused(atTop('(() => arguments[2](module0))()'), echo.coreFiles, /the global 'arguments'/);
    refused(atTop('arguments[0]'), echo.coreFiles, /the global 'arguments'/);
    refused(atTop("import('node:fs')"), echo.coreFiles, /a dynamic import\(\)/);
    // A nested function's own `arguments` is its own.
    inspectTranspiledJs(atTop('(function () { return arguments.length; })()'), echo.coreFiles);
  });

  it('names line and column exactly', () => {
    const source = breakout("import('node:fs')");
    const line = lineOf(source, "import('node:fs')");
    const column = source.split('\n')[line - 1]!.indexOf("import('node:fs')") + 1;
    refused(source, echo.coreFiles, new RegExp(`a dynamic import\\(\\) at ${line}:${column}\\b`));
  });

  it('a copy of jco\'s own fetchCompile preamble, pasted in, is refused', () => {
    const preamble = echo.source.slice(echo.source.indexOf('async function fetchCompile'), echo.source.indexOf('const hasOwnProperty'));
    const source = echo.source.replace(NAME, `exports1['x']; ${preamble}; fetchCompile('/etc/passwd'); ['x']`);
    refused(source, echo.coreFiles, /a second copy of jco's fetchCompile preamble/);
  });

  it('static imports and re-exports are refused (jco\'s async output has none)', () => {
    refused(`import fs from 'node:fs';\n${echo.source}`, echo.coreFiles, /an import from "node:fs" at 1:1/);
    refused(`import * as cp from 'node:child_process';\n${echo.source}`, echo.coreFiles, /an import from "node:child_process"/);
    refused(`${echo.source}\nexport * from 'node:fs';`, echo.coreFiles, /an export from "node:fs"/);
    refused(`${echo.source}\nexport { readFileSync } from 'node:fs';`, echo.coreFiles, /an export from "node:fs"/);
    refused(`${echo.source}\nexport default 1;`, echo.coreFiles, /a default export/);
  });

  it('a local name shadowing a global is a local: jco\'s own locals never look global, and a shadow does not hide a global', () => {
    // A local `process` is not the global one…
    inspectTranspiledJs(breakout('((process) => process)(1)'), echo.coreFiles);
    // …but a global used beside it still is.
    refused(breakout('((process) => process)(1) + require'), echo.coreFiles, /the global 'require'/);
  });

  it('source that does not parse is refused', () => {
    refused(echo.source.replace(NAME, "exports1['x'']"), echo.coreFiles, /does not parse/);
    refused('('.repeat(200_000), [], /does not parse|nested too deeply/);
  });
});

describe('instantiateCore must resolve to a listed core module and run at most once per call site', () => {
  let echo: Transpiled;
  const NAME = "exports1['cabi_post_chatty:plugin/plugin@0.3.0#invoke-tool']";
  before(async () => {
    echo = await transpile(await buildFixture('echo'));
  });
  const breakout = (payload: string): string => echo.source.replace(NAME, `exports1['x'] ?? (${payload}), ['x']`);

  it('an extra call at a legitimate place is counted, so the list stays an upper bound', () => {
    const { coreInstantiations } = inspectTranspiledJs(breakout('instantiateCore(module0)'), echo.coreFiles);
    assert.deepEqual(coreInstantiations, ['component.core2.wasm', 'component.core.wasm', 'component.core3.wasm', 'component.core.wasm']);
    // Inside a function that is called at once, still once.
    const iife = inspectTranspiledJs(breakout('(() => instantiateCore(module0))()'), echo.coreFiles);
    assert.equal(iife.coreInstantiations.length, 4);
  });

  it('refuses a call inside a loop', () => {
    refused(breakout('(() => { for (;;) instantiateCore(module0); })()'), echo.coreFiles, /instantiateCore called inside a loop/);
    refused(breakout('(() => { let i = 0; while (i++ < 9) { instantiateCore(module0); } })()'), echo.coreFiles, /inside a loop/);
    refused(breakout('(() => { for (const m of [module0, module0]) instantiateCore(m); })()'), echo.coreFiles, /inside a loop|not a const getCoreModule/);
  });

  it('refuses a call inside a function that could run more than once', () => {
    refused(breakout('[1, 2, 3].map(() => instantiateCore(module0))'), echo.coreFiles, /inside a function that could run more than once/);
    refused(breakout('Promise.resolve().then(function () { return instantiateCore(module0); })'), echo.coreFiles, /could run more than once/);
    refused(breakout('({ get x() { return instantiateCore(module0); } }).x'), echo.coreFiles, /could run more than once/);
    refused(breakout('(function again(n) { if (n) again(n - 1); return instantiateCore(module0); })(3)'), echo.coreFiles,
      /the function 'again' that instantiates core modules refers to itself/);
  });

  it('refuses a call it cannot resolve to a file, or to a file the component does not have', () => {
    refused(breakout("instantiateCore(getCoreModule('component.core.wasm'))"), echo.coreFiles, /instantiateCore called on something other than a module constant/);
    refused(breakout('(() => { let m = module0; return instantiateCore(m); })()'), echo.coreFiles, /'m', which is not a const getCoreModule/);
    refused(breakout("(() => { const m = getCoreModule('component.core9.wasm'); return instantiateCore(m); })()"), echo.coreFiles,
      /"component\.core9\.wasm", which is not one of the component's core modules/);
    refused(breakout('instantiateCore(yield* module0)'), echo.coreFiles, /something other than a module constant/);
    // jco's own calls name files the caller says the component does not have.
    refused(echo.source, echo.coreFiles.filter((f) => f !== 'component.core3.wasm'), /"component\.core3\.wasm", which is not one of/);
  });
});

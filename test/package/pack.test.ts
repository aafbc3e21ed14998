// The package as someone outside this repository gets it: `npm pack` of the working tree (a copy,
// so its `prepack` and `prepare` rebuild out/ there, not here), the tarball installed into a copy
// of examples/electron-app taken out of the tarball, in a scratch folder (outside this repository:
// its node_modules are out of reach) with every script refused, its dependencies from the registry
// through npm's cache. Then: every export docs/embedding.md lists, imported from the installed
// package with its kind; the preload by its subpath, sandboxed; a TypeScript consumer of every
// entry point (skipLibCheck false, no any); the example type-checked against the installed
// declarations; and the example's main.js run on
// the stand-in electron, its page served by its own app: handler to Chromium, where
// <chatty-approvals> shows a real worker's approval and the answer reaches the worker. And in a
// project that had electron first (npm leaves componentize-js's undeclared preview2-shim nested),
// a plugin built from an ES module and from a CommonJS file.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire, register } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import type * as TypeScript from 'typescript';
import type { ChattyBridge, ModuleList, Snapshot, TaskUpdate } from '../../main/app/bridge/contract.js';
import { gitRepoOnMain } from '../agents/helpers.js';
import { resetElectron, StandInFrame, type StandIn } from '../app/electron-stand-in/electron.js';
import { installPreload, launchChromium } from '../helpers/renderer-page.js';
import { buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { anyInPublicTypes, writeConsumer } from './public-types.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-pack-')));
const app = join(scratch, 'app');
const installed = join(app, 'node_modules', 'chatty-protocol-gateway');
/** A project with the tarball as its only dependency, resolved (`--package-lock-only`), not installed. */
const cliOnly = join(scratch, 'cli-only');
/**
 * A project that had `electron` before it installed the tarball: npm then leaves no
 * `@bytecodealliance/preview2-shim` at the top of its node_modules (jco-std's optional peer wants
 * another version), only copies nested under the package and jco, while componentize-js, which
 * imports the shim undeclared, is at the top.
 */
const shimless = join(scratch, 'shimless');
after(() => rmSync(scratch, { recursive: true, force: true }));

// Packing builds the whole project (tsc) and installing fetches ~280 packages: minutes on a loaded machine.
const SLOW = { timeout: 15 * 60_000 };

/** The environment of the commands run here: npm's own settings of a parent `npm test` are not passed on. */
// The Node running this test comes first on PATH, so npm's scripts (the example's Node check) run
// under it, not under another `node` the machine has.
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))), PATH: `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}` };

/** A command's output; its stderr is in the error when it fails. */
async function run(command: string, args: string[], cwd: string): Promise<string> {
  try {
    return (await promisify(execFile)(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (err) {
    // (tsc says what is wrong on stdout.)
    const failed = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
}

/** The working tree as git sees it (tracked and new files, not ignored ones), copied to `to`. */
async function copyWorkingTree(to: string): Promise<void> {
  const files = (await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], repo)).split('\0').filter((f) => f !== '');
  for (const file of files) {
    const from = join(repo, file);
    if (!existsSync(from) || !statSync(from).isFile()) continue; // deleted in the working tree
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(from, join(to, file));
  }
  // The build's tools from this repository's node_modules, each entry linked; .bin a folder of its
  // own, so `prepare`'s link of the package's own bin lands in the copy.
  mkdirSync(join(to, 'node_modules', '.bin'), { recursive: true });
  for (const entry of readdirSync(join(repo, 'node_modules'))) if (entry !== '.bin') symlinkSync(join(repo, 'node_modules', entry), join(to, 'node_modules', entry));
  for (const entry of readdirSync(join(repo, 'node_modules', '.bin'))) symlinkSync(join(repo, 'node_modules', '.bin', entry), join(to, 'node_modules', '.bin', entry));
}

/** `| \`subpath\` | \`export\` | kind |` rows under docs/embedding.md's "Every export, by subpath". */
function documentedExports(): { subpath: string; name: string; kind: string }[] {
  const doc = readFileSync(join(repo, 'docs', 'embedding.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Every export, by subpath')) ?? '';
  return [...section.matchAll(/^\| `([^`]+)` \| `([^`]+)` \| (\w+) \|$/gm)].map(([, subpath = '', name = '', kind = '']) => ({ subpath, name, kind }));
}

/** The kind of a value as the table names it (runs in Node and, as text, in the page). */
const KIND_OF = `(v) => typeof v === 'function' ? (/^class[\\s{]/.test(Function.prototype.toString.call(v)) ? 'class' : 'function') : v === null ? 'null' : typeof v`;

let packedFiles: string[] = [];

/** What a killed `plugin build` leaves in a plugin's folder, and a stray script beside the example app: never packed. */
const LEFTOVERS = [
  'examples/plugins/text-tools/plugin.wasm.4242.tmp',
  'examples/plugins/text-tools/.chatty-build-entry-4242.js',
  'examples/plugins/text-tools/.build-stamp',
  'examples/electron-app/scratch.js',
];

before(async () => {
  const src = join(scratch, 'src');
  await copyWorkingTree(src);
  for (const leftover of LEFTOVERS) writeFileSync(join(src, leftover), 'left over\n');
  const [packed] = JSON.parse(await run('npm', ['pack', '--json', '--pack-destination', scratch], src)) as { filename: string; files: { path: string }[] }[];
  assert.ok(packed, 'npm pack says what it packed');
  packedFiles = packed.files.map((f) => f.path);
  // The example as a developer with only the tarball gets it: out of the tarball, not this repository.
  const unpacked = join(scratch, 'unpacked');
  mkdirSync(unpacked);
  await run('tar', ['-xzf', join(scratch, packed.filename), '-C', unpacked, 'package/examples/electron-app'], scratch);
  mkdirSync(app);
  const example = join(unpacked, 'package', 'examples', 'electron-app');
  for (const file of readdirSync(example)) if (statSync(join(example, file)).isFile()) copyFileSync(join(example, file), join(app, file));
  assert.deepEqual(readdirSync(app).sort(), readdirSync(join(repo, 'examples', 'electron-app')).sort(), 'the tarball has the whole example');
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.equal(manifest.dependencies['chatty-protocol-gateway'], 'file:../..', 'the example depends on the project by a relative path');
  manifest.dependencies['chatty-protocol-gateway'] = `file:${join(scratch, packed.filename)}`;
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // A CLI-only project (the tarball alone): npm's resolved tree, written without installing it.
  mkdirSync(cliOnly);
  writeFileSync(join(cliOnly, 'package.json'), JSON.stringify({ name: 'cli-only', version: '1.0.0', private: true, dependencies: { 'chatty-protocol-gateway': manifest.dependencies['chatty-protocol-gateway'] } }));
  // No script of any package runs: the package must work as unpacked.
  mkdirSync(shimless);
  writeFileSync(join(shimless, 'package.json'), JSON.stringify({ name: 'shimless', version: '1.0.0', private: true }));
  const install = ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'];
  await Promise.all([
    run('npm', install, app),
    run('npm', ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], cliOnly),
    (async () => {
      await run('npm', [...install, 'electron'], shimless);
      await run('npm', [...install, manifest.dependencies['chatty-protocol-gateway']!], shimless);
    })(),
  ]);
}, SLOW);

test('the tarball holds the built out/ (JavaScript and declarations of every subpath, ./preload among them), the preload, the example Electron app, the plugin WIT and example plugins, the README and LICENSE; no sources, tests or maps', () => {
  const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; default: string }> };
  const subpaths = Object.keys(manifest.exports).filter((s) => s !== './package.json');
  assert.deepEqual(subpaths.sort(), ['.', './electron', './preload', './renderer', './terminal', './worker']);
  for (const subpath of subpaths) {
    const target = manifest.exports[subpath];
    assert.ok(target && typeof target === 'object');
    for (const file of [target.types, target.default]) assert.ok(packedFiles.includes(file.replace(/^\.\//, '')), `${subpath}: ${file} is packed`);
  }
  for (const file of ['out/main/cli/bin.js', 'out/preload/index.cjs', 'examples/electron-app/main.js', 'examples/electron-app/page.js', 'examples/electron-app/index.html', 'examples/electron-app/package.json', 'out/main/display/index.js', 'main/plugins/wit/plugin.wit', 'examples/plugins/text-tools/module.toml', 'examples/agents/helper.js', 'main/worker/README.md', 'README.md', 'LICENSE', 'docs/embedding.md']) {
    assert.ok(packedFiles.includes(file), `${file} is packed`);
  }
  const stray = packedFiles.filter((f) => /\.map$|^test\/|^bench\/|^(main|renderer|preload)\/.*\.c?ts$|\.wasm$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.d.cts'));
  assert.deepEqual(stray, []);
});

test("a killed plugin build's leftovers (<wasm>.<pid>.tmp, .chatty-build-entry-*.js, .build-stamp) and a stray script beside the example app are not packed", () => {
  assert.deepEqual(LEFTOVERS.filter((file) => packedFiles.includes(file)), []);
});

test('it installs with every script refused; electron is an optional peer, so a project without it never gets it', () => {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  assert.deepEqual(manifest['peerDependenciesMeta']?.['electron'], { optional: true });
  assert.equal(manifest['dependencies']?.['electron'], undefined);
  assert.ok(existsSync(join(installed, 'out', 'main', 'index.js')), 'out/ came in the tarball');
  const lock = JSON.parse(readFileSync(join(cliOnly, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  assert.ok(Object.keys(lock.packages).includes('node_modules/zod'), 'the tree was resolved');
  assert.deepEqual(Object.keys(lock.packages).filter((path) => /(^|\/)node_modules\/electron$/.test(path)), []);
});

test('every documented export of ., ./worker, ./electron and ./terminal imports on plain Node (20 here) with its documented kind', async () => {
  const documented = documentedExports().filter((e) => e.subpath !== './renderer');
  assert.ok(documented.length >= 25, `docs/embedding.md lists the exports (${documented.length} found)`);
  for (const subpath of ['.', './worker', './electron', './terminal']) assert.ok(documented.some((e) => e.subpath === subpath), `${subpath} is documented`);
  // A plain `node` in the app's folder: no tsx, no hook, nothing of this repository on its path.
  const script = `
    const kindOf = ${KIND_OF};
    const rows = JSON.parse(process.argv[1]);
    const kinds = {};
    const names = {};
    for (const { subpath, name } of rows) {
      const module = await import(subpath === '.' ? 'chatty-protocol-gateway' : 'chatty-protocol-gateway' + subpath.slice(1));
      kinds[subpath + ' ' + name] = name in module ? kindOf(module[name]) : 'missing';
      names[subpath] = Object.keys(module).sort();
    }
    console.log(JSON.stringify({ kinds, names }));`;
  const { kinds, names } = JSON.parse(await run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(documented)], app)) as {
    kinds: Record<string, string>;
    names: Record<string, string[]>;
  };
  assert.deepEqual(kinds, Object.fromEntries(documented.map((e) => [`${e.subpath} ${e.name}`, e.kind])));
  // The table is the whole of ./worker, ./electron and ./terminal: an export it does not list fails here.
  for (const subpath of ['./worker', './electron', './terminal']) {
    assert.deepEqual(names[subpath], documented.filter((e) => e.subpath === subpath).map((e) => e.name).sort(), `${subpath}: every export is in docs/embedding.md's table`);
  }
  // A CommonJS main process may require() them too (no top-level await anywhere in their graphs).
  const requireScript = "for (const s of ['', '/worker', '/electron', '/terminal']) console.log(Object.keys(require('chatty-protocol-gateway' + s)).length > 0)";
  const required = await run(process.execPath, ['--input-type=commonjs', '-e', requireScript], app);
  assert.deepEqual(required.trim().split('\n'), ['true', 'true', 'true', 'true']);
});

test("the preload resolves by the package's ./preload subpath (a bundled main process cannot use preloadPath's own location), to preloadPath's file: one CommonJS file that, sandboxed, requires nothing but electron", async () => {
  const script = `
    const vm = require('node:vm');
    const path = require.resolve('chatty-protocol-gateway/preload');
    const exposed = {};
    const electron = { contextBridge: { exposeInMainWorld: (key, api) => { exposed[key] = api; } }, ipcRenderer: { invoke: async () => {}, on() {}, removeListener() {} } };
    // A sandboxed preload's require: electron and nothing else (no fs, no path, no file of the package).
    const sandboxedRequire = (name) => { if (name !== 'electron') throw new Error('sandboxed preload cannot require ' + name); return electron; };
    const module = { exports: {} };
    vm.runInNewContext('(function (require, module, exports) {' + require('node:fs').readFileSync(path, 'utf8') + '\\n})', {})(sandboxedRequire, module, module.exports);
    import('chatty-protocol-gateway/electron').then(({ preloadPath }) => console.log(JSON.stringify({ path, preloadPath, keys: Object.keys(exposed), api: Object.keys(exposed.chatty ?? {}).length })));`;
  const { path, preloadPath, keys, api } = JSON.parse(await run(process.execPath, ['--input-type=commonjs', '-e', script], app)) as { path: string; preloadPath: string; keys: string[]; api: number };
  assert.equal(path, join(installed, 'out', 'preload', 'index.cjs'));
  assert.equal(preloadPath, path);
  assert.deepEqual(keys, ['chatty']);
  assert.ok(api >= 12, `window.chatty has the bridge's functions (${api})`);
});

test('examples/electron-app type-checks (checkJs, strict) against the installed declarations', async () => {
  await run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app);
});

test('a TypeScript consumer of all five entry points compiles with skipLibCheck false, under module nodenext (a CommonJS .cts requiring the four Node ones too) and under moduleResolution bundler, and no export\'s public type has an any in it', async () => {
  const ts = createRequire(join(app, 'package.json'))('typescript') as typeof TypeScript;
  // docs/embedding.md's one line for skipLibCheck false: @types/koa reads content-disposition's own types otherwise.
  const paths = { 'content-disposition': ['../node_modules/@types/content-disposition'] };
  for (const [name, options] of [
    ['ts-nodenext', { module: 'nodenext', skipLibCheck: false, paths }],
    ['ts-bundler', { module: 'esnext', moduleResolution: 'bundler', skipLibCheck: false, paths }],
  ] as const) {
    const config = writeConsumer(join(app, name), options);
    await run(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], app);
    assert.deepEqual(anyInPublicTypes(ts, config), [], `${name}: no any in the public types`);
  }
});

test("the example's npm start checks the Node version before Electron is reached: below 22.12, one line saying so and exit 1", async () => {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const tooOld = major < 22 || (major === 22 && minor < 12);
  // Only the check (`prestart`): on a Node new enough it passes and nothing is launched.
  const checked = await run('npm', ['run', '--silent', 'prestart'], app).then(
    () => ({ code: 0, stderr: '' }),
    (err: Error) => ({ code: 1, stderr: err.message }),
  );
  if (tooOld) {
    assert.equal(checked.code, 1);
    assert.match(checked.stderr, new RegExp(`npm start: Electron 45 needs Node >= 22\\.12 to launch; this is Node ${process.versions.node.replaceAll('.', '\\.')}`));
  } else {
    assert.equal(checked.code, 0, checked.stderr);
  }
});

test("the installed CLI runs README's `serve --agent helper=\"node helper.js\"` with the package's examples/agents/helper.js copied, uncommitted, into a CommonJS project (npm init -y's) in git", async () => {
  // Inside the app's folder, so `chatty-protocol-gateway/worker` resolves to the installed package.
  const project = join(app, 'cjs-project');
  mkdirSync(project);
  gitRepoOnMain(project);
  writeFileSync(join(project, 'package.json'), '{ "type": "commonjs" }\n');
  copyFileSync(join(installed, 'examples', 'agents', 'helper.js'), join(project, 'helper.js'));
  const noPlugins = join(scratch, 'no-plugins');
  mkdirSync(noPlugins);
  const args = ['serve', '--agent', 'helper=node helper.js', '--approvals', 'allow', '--modules-dir', noPlugins, '--runtime-dir', join(scratch, 'run-helper')];
  const serve = spawn(join(app, 'node_modules', '.bin', 'chatty-gateway'), args, { cwd: project, env, stdio: 'pipe' });
  serve.stdin.end('helper notes.txt remember the milk\n');
  let stderr = '';
  const exited = once(serve, 'exit');
  // The task's end, or the gateway's (a failed start), whichever comes first.
  await Promise.race([
    exited,
    new Promise<void>((resolve) => serve.stderr.on('data', (chunk: Buffer) => {
      stderr += String(chunk);
      if (/task #1 \(helper\) (completed|did not complete)/.test(stderr)) resolve();
    })),
  ]);
  serve.kill('SIGTERM');
  const [code] = await exited;
  assert.ok(stderr.includes('chatty-gateway: task #1 (helper) completed\n'), stderr);
  assert.ok(stderr.includes(`  #1 | wrote notes.txt in ${join(project, '.git', 'chatty-worktrees', 'helper-0')}\n`), stderr);
  assert.equal(code, 0, stderr);
});

/** The fenced blocks of a README's 'Embedding it' section, in order. */
function embeddingBlocks(readme: string): { lang: string; code: string }[] {
  const at = readme.indexOf('## Embedding it');
  assert.notEqual(at, -1, "README has its 'Embedding it' section");
  const section = readme.slice(at, readme.indexOf('\n## ', at + 3));
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((match) => ({ lang: match[1]!, code: match[2]! }));
}

test("README's 'Embedding it' runs as written from the installed package: the gateway and the window in one main-process module (stand-in electron), the terminal on a gateway no window is bridged to, the page's import in a block of its own", async () => {
  // b1757ef's README put the page's import in the main-process block (hoisted: 'HTMLElement is not
  // defined' before its first line ran) and attached the terminal to the gateway it had just bridged.
  const [gatewayBlock, windowBlock, terminalBlock, pageBlock, ...more] = embeddingBlocks(readFileSync(join(installed, 'README.md'), 'utf8'));
  assert.equal(more.length, 0);
  assert.ok(gatewayBlock && windowBlock && terminalBlock && pageBlock, 'four blocks: the gateway, the window, the terminal, the page');
  assert.match(windowBlock.code, /attachDesktopBridge\(gateway,/);
  assert.doesNotMatch(windowBlock.code, /attachTerminalRoot|\/renderer'/, 'the window block neither attaches a terminal nor imports the page module');
  assert.doesNotMatch(terminalBlock.code, /attachTerminalRoot\(gateway\./, 'the terminal is not given the bridged gateway');
  assert.match(pageBlock.code, /from 'chatty-protocol-gateway\/renderer'/);
  const project = join(app, 'readme-project'); // inside the app: the installed package resolves
  mkdirSync(join(project, 'plugins'), { recursive: true }); // './plugins', a folder that must exist
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
  const standIn = pathToFileURL(join(repo, 'test', 'app', 'electron-stand-in'));
  writeFileSync(join(project, 'boot.mjs'), [
    "import { register } from 'node:module';",
    `register(${JSON.stringify(`${standIn.href}/hooks.mjs`)}, { data: { parents: [${JSON.stringify(`${pathToFileURL(project).href}/`)}] } });`,
    `const { resetElectron } = await import(${JSON.stringify(`${standIn.href}/electron.ts`)});`,
    `resetElectron({ paths: { userData: ${JSON.stringify(join(scratch, 'readme-user-data'))} } }).app.ready();`,
  ].join('\n'));
  assert.equal(gatewayBlock.code.split("'/tmp/x'").length, 2, 'the runtime directory is named once');
  const gateway = gatewayBlock.code.replace("'/tmp/x'", JSON.stringify(join(scratch, 'readme-run')));
  const close = 'await gateway.stop();\nawait registry.close();\n';
  writeFileSync(join(project, 'window.mjs'), `${gateway}${windowBlock.code}console.log('window attached', typeof detach);\ndetach();\n${close}`);
  writeFileSync(join(project, 'terminal.mjs'), `${gateway}const headless = gateway; // no window bridged to it\n${terminalBlock.code}console.log('terminal attached', typeof terminal.close);\nterminal.close();\n${close}`);
  const tsx = import.meta.resolve('tsx');
  assert.match(await run(process.execPath, ['--import', tsx, '--import', './boot.mjs', 'window.mjs'], project), /^window attached function$/m);
  assert.match(await run(process.execPath, ['--import', tsx, '--import', './boot.mjs', 'terminal.mjs'], project), /^terminal attached function$/m);
});

test("a plugin builds where npm left no @bytecodealliance/preview2-shim at the top of node_modules (componentize-js imports it undeclared): through openModules from an ES module, its build in a child process, and through buildPlugin from a CommonJS file, in its own process", SLOW, async () => {
  const top = join(shimless, 'node_modules', '@bytecodealliance');
  assert.ok(existsSync(join(top, 'componentize-js', 'package.json')), 'componentize-js is at the top');
  assert.equal(existsSync(join(top, 'preview2-shim')), false, 'npm left no shim at the top (the layout this test is about)');
  // Two plugins from the installed package's template, one for each embedder.
  const cli = join(shimless, 'node_modules', 'chatty-protocol-gateway', 'out', 'main', 'cli', 'bin.js');
  for (const folder of ['esm-examples', 'cjs-plugins']) {
    mkdirSync(join(shimless, folder));
    await run(process.execPath, [cli, 'plugin', 'new', 'hello'], join(shimless, folder));
  }
  // The bundled examples' path with a stand-in source of one plugin: built by buildInChildProcess.
  writeFileSync(join(shimless, 'esm.mjs'), `
    import { openModules } from 'chatty-protocol-gateway';
    const { scan } = await openModules(undefined, { examples: { source: ${JSON.stringify(join(shimless, 'esm-examples'))}, cacheDir: ${JSON.stringify(join(shimless, 'esm-cache'))} } });
    console.log(JSON.stringify(scan.loaded.map((m) => m.name)));`);
  writeFileSync(join(shimless, 'cjs.cjs'), `
    import('chatty-protocol-gateway').then(async ({ buildPlugin }) => {
      const { wasmPath } = await buildPlugin(${JSON.stringify(join(shimless, 'cjs-plugins', 'hello'))});
      console.log(JSON.stringify(wasmPath));
    });`);
  const [esm, cjs] = await Promise.all([run(process.execPath, ['esm.mjs'], shimless), run(process.execPath, ['cjs.cjs'], shimless)]);
  assert.deepEqual(JSON.parse(esm), ['hello'], 'openModules built and served the plugin');
  const wasm = JSON.parse(cjs) as string;
  assert.equal(wasm, join(shimless, 'cjs-plugins', 'hello', 'plugin.wasm'));
  assert.ok(statSync(wasm).size > 1_000_000, 'buildPlugin wrote the component');
});

describe('the example app, its main.js on the stand-in electron and its page in Chromium', SLOW, () => {
  let electron: StandIn;
  let browser: Browser | undefined;
  let server: Server | undefined;
  const saved = { ...process.env };

  before(async () => {
    register('../app/electron-stand-in/hooks.mjs', { parentURL: import.meta.url, data: { parents: [pathToFileURL(`${app}/`).href] } });
    mkdirSync(join(scratch, 'modules'));
    // A plugin of CHATTY_MODULES_DIR that asks to read files: the person is asked first.
    writeModuleDir(join(scratch, 'modules'), 'notes', { manifest: fixtureManifest('notes', '[files]\nroot = "data"\n'), component: await buildFixture('echo'), extra: { 'data/note.txt': 'a note' } });
    // No CHATTY_WORKSPACE: the agents get a folder of their own, never the app's (its page.js answers their approvals).
    delete process.env['CHATTY_WORKSPACE'];
    Object.assign(process.env, { CHATTY_MODULES_DIR: join(scratch, 'modules'), CHATTY_RUNTIME_DIR: join(scratch, 'run') });
    electron = resetElectron({ paths: { userData: join(scratch, 'user-data'), logs: join(scratch, 'logs') } });
    await import(pathToFileURL(join(app, 'main.js')).href);
    electron.app.ready();
    await electron.windowLoaded;
  });

  after(async () => {
    await browser?.close();
    server?.close();
    if (electron.app.exitCode === undefined) electron.app.quit();
    await electron.app.gone;
    for (const key of ['CHATTY_MODULES_DIR', 'CHATTY_RUNTIME_DIR', 'CHATTY_WORKSPACE']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  test("main.js registers app: before ready, sets the menu, and opens a sandboxed window on its page with a copy of the installed preload under userData", () => {
    assert.deepEqual(electron.protocol.privileged, [{ schemes: [{ scheme: 'app', privileges: { standard: true, secure: true } }], beforeReady: true }]);
    assert.ok(electron.applicationMenu, 'the menu without Reload is set');
    const [window] = electron.windows;
    assert.equal(window?.loadedUrl, 'app://chatty/index.html');
    assert.ok(statSync(join(scratch, 'user-data', 'workspace')).isDirectory(), "the agents' own workspace, <userData>/workspace, not the app's folder");
    const prefs = window?.options['webPreferences'] as Record<string, unknown>;
    // A copy made at launch (preloadCopy): Electron reads the preload again at every load.
    const built = readFileSync(join(installed, 'out', 'preload', 'index.cjs'));
    const copy = join(scratch, 'user-data', 'chatty-preload', `index-${createHash('sha256').update(built).digest('hex')}.cjs`);
    assert.deepEqual([prefs['preload'], prefs['sandbox'], prefs['contextIsolation'], prefs['nodeIntegration']], [copy, true, true, false]);
    assert.deepEqual(readFileSync(copy), built);
  });

  test("a plugin of CHATTY_MODULES_DIR asking to read files is not served until the page grants it (main.js gives the bridge the registry's grant desk)", async () => {
    const contents = electron.windows[0]?.webContents;
    assert.ok(contents);
    const top = (channel: string, payload?: unknown): Promise<unknown> => electron.ipcMain.invoke(channel, contents, contents.mainFrame, payload);
    const { grants, pendingModules } = (await top('chatty:snapshot')) as Snapshot;
    assert.deepEqual(grants.map((g) => [g.plugin, g.asks.map((a) => a.capability)]), [['notes', ['file']]], 'the page is asked');
    assert.deepEqual(pendingModules.map((m) => m.name), ['notes'], 'not served meanwhile');
    const served = contents.sentOn<ModuleList>('chatty:modules', (list) => list.modules.some((m) => m.name === 'notes'));
    await top('chatty:answer-grant', { requestId: grants[0]?.requestId, decision: 'granted' });
    await served;
    assert.ok(readFileSync(join(scratch, 'user-data', 'plugin-grants.json'), 'utf8').includes(grants[0]?.digest ?? '?'), 'remembered in <userData>/plugin-grants.json');
  });

  test("the page, served by main.js's app: handler, shows <chatty-approvals> for a real worker's approval, and the answer reaches the worker", async () => {
    const window = electron.windows[0];
    assert.ok(window);
    const contents = window.webContents;
    const handler = electron.session.defaultSession.protocol.handlers.get('app');
    assert.ok(handler, 'main.js handles app:');
    // Chromium cannot load app: here: a loopback server hands each request to the app's handler as Electron would.
    server = createServer((req, res) => {
      void Promise.resolve(handler(new Request(`app://chatty${req.url ?? '/'}`, { method: req.method ?? 'GET' }))).then(
        async (answer) => {
          res.writeHead(answer.status, Object.fromEntries(answer.headers));
          res.end(Buffer.from(await answer.arrayBuffer()));
        },
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    browser = await launchChromium();
    const page = await browser.newPage();
    // Every error in the page, a refused request among them (a CSP violation is a console error);
    // but Chromium's own favicon fetch, which Electron's window never makes.
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (message) => void (message.type() === 'error' && !/status of 404/.test(message.text()) && problems.push(message.text())));
    page.on('response', (response) => void (response.status() !== 200 && new URL(response.url()).pathname !== '/favicon.ico' && problems.push(`${response.status()} ${response.url()}`)));
    // The preload the window was given (the copy of the installed one) in the page; its calls reach
    // the window's webContents.ipc as from its top frame.
    const preload = (electron.windows[0]?.options['webPreferences'] as Record<string, unknown>)['preload'];
    assert.equal(typeof preload, 'string');
    const { emit } = await installPreload(
      page,
      { handle: (channel, sender, payload) => electron.ipcMain.invoke(channel, contents, sender.isMainFrame ? contents.mainFrame : new StandInFrame(sender.url), payload) },
      readFileSync(preload as string, 'utf8'),
    );
    contents.onSend = (channel, payload) => void emit(channel, payload).catch(() => {});
    await page.goto(`${base}/index.html`);
    await page.waitForFunction(() => customElements.get('chatty-approvals') !== undefined);

    // ./renderer's documented exports, in the page (the only place the module runs).
    const rendererRows = documentedExports().filter((e) => e.subpath === './renderer');
    assert.ok(rendererRows.length > 0);
    // (KIND_OF's rule written out: the page's CSP allows no eval.)
    const rendererKinds = await page
      .evaluate(async (rows) => {
        const module = (await import('/out/renderer/index.js' as string)) as Record<string, unknown>;
        // Every export, so one the table does not list shows as 'undocumented'.
        return Object.fromEntries(
          [...new Set([...rows.map((r) => r.name), ...Object.keys(module)])].map((name) => {
            const v = module[name];
            const kind = typeof v === 'function' ? (/^class[\s{]/.test(Function.prototype.toString.call(v)) ? 'class' : 'function') : v === null ? 'null' : typeof v;
            return [name, !(name in module) ? 'missing' : rows.some((r) => r.name === name) ? kind : 'undocumented'];
          }),
        );
      }, rendererRows)
      .catch((err: Error) => ({ error: err.message }));
    assert.deepEqual(rendererKinds, Object.fromEntries(rendererRows.map((r) => [r.name, r.kind])));

    // A task on the bundled local-coder (a real worker process) asks to run a command.
    const { taskId } = await page.evaluate(() => (window as unknown as { chatty: ChattyBridge }).chatty.startTask({ agent: 'local-coder', prompt: 'exec echo answered-by-the-page' }));
    const popover = page.locator('chatty-approvals').getByRole('dialog');
    await popover.getByText('echo answered-by-the-page').first().waitFor({ state: 'visible' });
    await popover.getByRole('button', { name: 'Approve once' }).click();
    const ended = await contents.sentOn<TaskUpdate>('chatty:task', (u) => u.type === 'ended' && u.taskId === taskId);
    assert.deepEqual(ended, { type: 'ended', taskId, state: 'completed' });
    const snapshot = (await electron.ipcMain.invoke('chatty:snapshot', contents, contents.mainFrame)) as Snapshot;
    const entries = snapshot.tasks.find((t) => t.taskId === taskId)?.entries.map((e) => e.text) ?? [];
    assert.ok(entries.includes('approved echo answered-by-the-page'), entries.join('\n'));
    // The worker ran the command it was allowed: its output came back.
    assert.ok(entries.some((text) => text.includes('answered-by-the-page\n')), entries.join('\n'));
    assert.deepEqual(problems, []);
  });

  // Last: the window is refused from here on.
  test("a page refused for its preload is told where no page script reaches: main.js's onRefused shows Electron's dialog, with the reason", async () => {
    const window = electron.windows[0];
    assert.ok(window);
    const copy = (window.options['webPreferences'] as Record<string, unknown>)['preload'] as string;
    // Someone else's hard link to the copy, and a write through it (the page may run it from now on).
    const notes = join(scratch, 'user-data', 'notes.cjs');
    linkSync(copy, notes);
    chmodSync(notes, 0o600);
    writeFileSync(notes, "/* someone else's */");
    await assert.rejects(electron.ipcMain.invoke('chatty:snapshot', window.webContents, window.webContents.mainFrame), /refused chatty:snapshot: the window's preload copy/);
    assert.deepEqual(
      electron.dialog.messageBoxes.map((box) => [box.window === window, box.options['type'], box.options['message'], /^the window's preload copy .* was changed by someone else/.test(String(box.options['detail']))]),
      [[true, 'warning', 'This window no longer answers the agents', true]],
    );
  });
});

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export type WorkerEntry = 'guest-entry' | 'toolchain-entry';

const HERE = dirname(fileURLToPath(import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith('.ts');

/**
 * Starts one of the plugin runtime's worker threads. From the built `out/` tree the entry is plain
 * JavaScript. From the TypeScript sources (tests and benches under `node --import tsx`) a worker
 * does not inherit tsx's loader on Node 20, and registering tsx in every worker costs ~300 ms; so
 * the worker's few files are stripped of types once with the TypeScript compiler into
 * `node_modules/.cache/chatty-gateway/workers/<hash>/` and the worker starts from there.
 *
 * The worker's `process.env` is empty, whatever `options` say: guest code (and jco's generated
 * JavaScript, which is made from the guest's names) runs there.
 */
export function spawnWorker(entry: WorkerEntry, options: WorkerOptions): Worker {
  const url = FROM_SOURCE ? devEntry(entry) : new URL(`./worker/${entry}.js`, import.meta.url);
  // Neither worker needs the host's environment (tokens, keys, paths): both start with none.
  return new Worker(url, { ...options, execArgv: [], env: {} });
}

const devEntries = new Map<WorkerEntry, URL>();

function devEntry(entry: WorkerEntry): URL {
  const known = devEntries.get(entry);
  if (known) return known;
  const files = sourceGraph(join(HERE, 'worker', `${entry}.ts`));
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update(readFileSync(file));
  const root = findNodeModules(HERE);
  const outDir = join(root, '.cache', 'chatty-gateway', 'workers', hash.digest('hex').slice(0, 16));
  if (!existsSync(join(outDir, 'done'))) {
    const tmp = `${outDir}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n');
    for (const file of files) {
      const out = join(tmp, relative(HERE, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, stripTypes(readFileSync(file, 'utf8'), file));
    }
    writeFileSync(join(tmp, 'done'), '');
    try {
      renameSync(tmp, outDir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another process got there first
    }
  }
  const url = pathToFileURL(join(outDir, 'worker', `${entry}.js`));
  devEntries.set(entry, url);
  return url;
}

/** The entry file and every relative import it reaches. */
function sourceGraph(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      visit(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
    }
  };
  visit(entry);
  return [...seen].sort();
}

let ts: typeof import('typescript') | undefined;

function stripTypes(source: string, fileName: string): string {
  ts ??= loadTypescript();
  return ts.transpileModule(source, {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  }).outputText;
}

function loadTypescript(): typeof import('typescript') {
  // Only reached from the TypeScript sources, where the dev dependency is installed.
  return createRequire(import.meta.url)('typescript') as typeof import('typescript');
}

function findNodeModules(from: string): string {
  let dir = from;
  for (;;) {
    const candidate = join(dir, 'node_modules');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('chatty-gateway: no node_modules above the plugin runtime');
    dir = parent;
  }
}

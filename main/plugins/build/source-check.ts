/**
 * Reads a plugin's JavaScript with acorn before componentize-js does: componentize-js reports a
 * syntax error as "failed to parse JS source, encountered [1] errors" and an unresolvable import
 * not much better, so the file, line, column and reason are found here first.
 */
import { existsSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { parse, type Node, type Program } from 'acorn';
import { readRegularFileSync } from '../../owner-only/index.js';
import { PluginLoadError } from '../errors.js';
import { isWithin } from '../inside-module.js';
import { asciiOnly, quoted } from '../quoted.js';
import { CHATTY_IMPORTS, PLUGIN_PACKAGE_VERSION } from '../world.js';

/** acorn's SyntaxError carries where it happened (`loc.column` counts from 0). */
interface AcornSyntaxError extends SyntaxError {
  loc: { line: number; column: number };
}

function isAcornSyntaxError(err: unknown): err is AcornSyntaxError {
  if (!(err instanceof SyntaxError)) return false;
  const loc = (err as { loc?: unknown }).loc;
  return typeof loc === 'object' && loc !== null && typeof (loc as { line?: unknown }).line === 'number';
}

/** A string-literal module specifier with its position, from an import or re-export. */
interface Specifier {
  value: string;
  start: number;
}

/** One file the check read: its path relative to the plugin folder (`/`-separated) and the very bytes read. */
export interface CheckedFile {
  path: string;
  bytes: Buffer;
}

/** Largest source file read (a bundled plugin with its npm packages is a few MiB). */
const MAX_SOURCE_BYTES = 64 * 1024 * 1024;

/**
 * Parses `entry` and every file it imports by relative path (all must lie inside `root`), and
 * checks that `entry` exports `plugin`. Every file reached is parsed as a module whatever its name
 * (the engine loads `lib.txt` or `lib.JS` as JavaScript, and follows its imports); one that is not
 * JavaScript passes only as JSON named `.json` (no imports). Throws a `PluginLoadError` naming
 * `file:line:column` (relative to `root`) on the first problem. Returns the files read, as read:
 * the build runs from a copy of exactly these (`index.ts`), so what componentize-js sees is what
 * was checked.
 */
export function checkPluginSource(entry: string, root: string): CheckedFile[] {
  const checked: CheckedFile[] = [];
  const seen = new Set<string>();
  const pending = [resolve(entry)];
  const realRoot = realpathSync(root);
  while (pending.length) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    // By real path: a file linked in from outside (`data.json -> ~/.docker/config.json`) would be
    // read by componentize-js into the component, and served by a plugin nobody was asked about.
    if (!isWithin(realpathSync(file), realRoot)) {
      throw new PluginLoadError(`${shown(root, file)} is a link that leads out of the plugin directory ${root} (to ${realpathSync(file)}); the build takes only the plugin's own files`);
    }
    const bytes = readSource(file, root, realRoot);
    checked.push({ path: relative(root, file).split(sep).join('/'), bytes });
    const text = bytes.toString('utf8');
    const program = file !== resolve(entry) && /\.json$/i.test(file) && isJson(text) ? undefined : parseModule(file, text, root);
    if (program === undefined) continue; // JSON: nothing it imports
    if (file === resolve(entry) && !exportsPlugin(program)) {
      throw new PluginLoadError(
        `${shown(root, file)} does not export \`plugin\`: the build expects \`export const plugin = { metadata, listTools, invokeTool }\``,
      );
    }
    for (const spec of specifiers(program)) {
      const next = resolveImport(file, text, root, spec);
      if (next !== undefined) pending.push(next);
    }
  }
  return checked;
}

/**
 * A source file's bytes: a regular file of at most `MAX_SOURCE_BYTES`, opened without blocking (a
 * FIFO never stalls the build), whose opened descriptor still lies inside the folder on Linux (a
 * path swapped for a link after the real-path check is refused).
 */
function readSource(file: string, root: string, realRoot: string): Buffer {
  const judge = (fd: number): void => {
    if (process.platform !== 'linux') return;
    const opened = readlinkSync(`/proc/self/fd/${fd}`);
    if (!isWithin(opened, realRoot)) throw new PluginLoadError(`${shown(root, file)} moved out of the plugin directory ${root} while it was read; refused`);
  };
  const read = readRegularFileSync(file, { maxBytes: MAX_SOURCE_BYTES, noFollow: false }, judge);
  if (read.ok) return read.bytes;
  const why = read.why === 'not-regular' ? 'is not a regular file' : read.why === 'too-large' ? `is over ${MAX_SOURCE_BYTES / (1024 * 1024)} MiB` : `cannot be read (${read.message})`;
  throw new PluginLoadError(`${shown(root, file)} ${why}: the build takes only the plugin's own files`);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function parseModule(file: string, text: string, root: string): Program {
  try {
    return parse(text, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (err) {
    if (!isAcornSyntaxError(err)) throw err;
    // acorn appends " (line:column)" to its message; the location is given in front instead.
    const reason = err.message.replace(/\s*\(\d+:\d+\)$/, '');
    throw new PluginLoadError(`${shown(root, file)}:${err.loc.line}:${err.loc.column + 1}: ${visible(reason)}\n${excerpt(text, err.loc.line, err.loc.column)}`);
  }
}

/** Static imports and re-exports; `import()` with a computed name is left to componentize-js. */
function specifiers(program: Program): Specifier[] {
  const out: Specifier[] = [];
  for (const node of program.body) {
    if (node.type === 'ImportDeclaration' || node.type === 'ExportAllDeclaration' || (node.type === 'ExportNamedDeclaration' && node.source)) {
      const source = node.source as (Node & { value?: unknown }) | null | undefined;
      if (source && typeof source.value === 'string') out.push({ value: source.value, start: source.start });
    }
  }
  return out;
}

/** The file a relative import names (undefined for a host import); throws for anything else. */
function resolveImport(file: string, text: string, root: string, spec: Specifier): string | undefined {
  const where = at(root, file, text, spec.start);
  if (spec.value.startsWith('chatty:plugin/')) {
    const allowed = CHATTY_IMPORTS.map((i) => `chatty:plugin/${i}@${PLUGIN_PACKAGE_VERSION}`);
    if (allowed.includes(spec.value)) return undefined;
    throw new PluginLoadError(`${where}: import ${quoted(spec.value)}: the host provides ${allowed.join(', ')}`);
  }
  if (!spec.value.startsWith('./') && !spec.value.startsWith('../')) {
    throw new PluginLoadError(
      `${where}: import ${quoted(spec.value)}: a plugin imports only its own files (by a path starting with ./ or ../) and chatty:plugin/*; bundle npm packages into the plugin first (esbuild, rollup)`,
    );
  }
  const target = resolve(dirname(file), spec.value);
  if (target !== root && !target.startsWith(root + sep)) {
    throw new PluginLoadError(`${where}: import ${quoted(spec.value)} leaves the plugin directory ${root}; the build sees only that directory`);
  }
  for (const candidate of [target, `${target}.js`]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  throw new PluginLoadError(`${where}: import ${quoted(spec.value)}: no such file (${shown(root, target)})`);
}

function exportsPlugin(program: Program): boolean {
  for (const node of program.body) {
    // `export * from` may carry `plugin`; componentize-js will say if it does not.
    if (node.type === 'ExportAllDeclaration' && !node.exported) return true;
    if (node.type !== 'ExportNamedDeclaration') continue;
    const declaration = node.declaration;
    if (declaration?.type === 'VariableDeclaration') {
      if (declaration.declarations.some((d) => d.id.type === 'Identifier' && d.id.name === 'plugin')) return true;
    } else if (declaration && 'id' in declaration && declaration.id?.name === 'plugin') {
      return true;
    }
    for (const s of node.specifiers) {
      const name = s.exported.type === 'Identifier' ? s.exported.name : s.exported.value;
      if (name === 'plugin') return true;
    }
  }
  return false;
}

/** A file's path relative to the plugin folder, as a message shows it: as it is when plain, else quoted (a name may hold a line break). */
function shown(root: string, file: string): string {
  const path = relative(root, file).split(sep).join('/') || '.';
  return /^[\x21-\x7e]+$/.test(path) ? path : quoted(path);
}

/** `src/plugin.js:3:14` for a character offset into `text` (line and column from 1). */
function at(root: string, file: string, text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `${shown(root, file)}:${before.length}:${before.at(-1)!.length + 1}`;
}

/** How much of the offending line is shown either side of the column. */
const EXCERPT_CHARS = 60;

/**
 * The offending line and a caret under the column, indented: the line's text around the column
 * only (a minified line is megabytes), each character past printable ASCII as its `\u` escape
 * (a line break, a bidi override), the caret placed under the escaped text.
 */
function excerpt(text: string, line: number, column: number): string {
  const source = (text.split('\n')[line - 1] ?? '').replace(/\r$/, '');
  const col = Math.min(column, source.length);
  const from = Math.max(0, col - EXCERPT_CHARS);
  const to = Math.min(source.length, col + EXCERPT_CHARS);
  const head = (from > 0 ? '…' : '') + visible(source.slice(from, col));
  const tail = visible(source.slice(col, to)) + (to < source.length ? '…' : '');
  return `  ${head}${tail}\n  ${' '.repeat(head.length)}^`;
}

function visible(text: string): string {
  return asciiOnly(text.replace(/\t/g, ' '));
}

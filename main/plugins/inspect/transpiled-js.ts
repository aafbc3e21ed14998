/**
 * Checks the JavaScript jco-transpile generated for a component (`instantiation: 'async'`) before
 * it is imported. jco builds that source from the component's own names, and a hostile name once
 * broke out of a string literal and ran code; so the source is parsed and refused if it reaches
 * for anything jco's own output never needs (the host's globals, modules, code from strings), and
 * its `instantiateCore(…)` calls are resolved to the core module files they instantiate, as an
 * upper bound the sandbox budgets are divided by.
 *
 * This is a check on the shape of the code, not a proof: a determined attacker with code running
 * can reach `Function` by reflection without ever writing its name. The component name allow-list
 * closes the way in; this catches what slips past it, and pins the instantiation count.
 */
import { parse, tokenizer, type AnyNode, type CallExpression, type Identifier, type Pattern, type Program, type VariableDeclarator } from 'acorn';
import { PluginLoadError } from '../errors.js';

export interface TranspiledJsReport {
  /** One entry per `instantiateCore(…)` call in jco's output, in source order: the core module file it instantiates ('component.core2.wasm'…). */
  coreInstantiations: string[];
}

/**
 * Static `import … from` / `export … from` sources jco's async output may have: none. It takes
 * everything it needs as `instantiate(getCoreModule, imports, instantiateCore)`'s arguments.
 */
const ALLOWED_IMPORT_SOURCES: ReadonlySet<string> = new Set<string>();

/**
 * Globals jco's output reads (found by transpiling the test fixtures and the componentize-js
 * examples): language built-ins, typed arrays, text coding and `console.debug` for its debug log.
 * Nothing here reaches the file system, the network, other threads or code from strings.
 */
const SAFE_GLOBALS: ReadonlySet<string> = new Set([
  'undefined', 'NaN', 'Infinity',
  'Array', 'Number', 'String', 'Boolean', 'BigInt', 'Symbol', 'Math', 'JSON', 'Date',
  'Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'AggregateError',
  'Promise', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef', 'FinalizationRegistry',
  'ArrayBuffer', 'DataView', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array', 'Uint32Array', 'Int32Array',
  'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Uint8ClampedArray',
  'TextEncoder', 'TextDecoder', 'console', 'isNaN', 'isFinite', 'parseInt', 'parseFloat',
  // jco's async task loop; Node's timers refuse a string of code.
  'queueMicrotask', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval',
  // Names jco's debug paths use without declaring them (they throw if ever reached).
  'rep', 'vals', 'componentIdx',
]);

/**
 * Globals that may be used only as `G.member`, with these members. `WebAssembly`: never `Module`,
 * `Instance`, `Memory`, `Table` or `instantiate`, which would create instances and memories the
 * sandbox does not count. `Object`: none of its reflection (`getPrototypeOf`,
 * `getOwnPropertyDescriptor`…), the short way from any function to `Function`.
 */
const MEMBER_ONLY_GLOBALS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['WebAssembly', new Set(['Global', 'RuntimeError', 'SuspendError', 'Suspending', 'promising'])],
  ['Object', new Set(['assign', 'create', 'defineProperty', 'entries', 'freeze', 'keys', 'prototype', 'values'])],
]);

/** Property names that lead from any object to `Function` (and so to code from strings). */
const FORBIDDEN_PROPERTIES: ReadonlySet<string> = new Set(['constructor', '__proto__', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__']);

/**
 * jco's fixed preamble (jco-transpile 0.15), written before any name-derived code: it is the only
 * place `process`, `globalThis`, `fetch`, `import()` and `import.meta` may appear, and only in
 * exactly this text (compared token by token). `fetchCompile` is dead code for us (the worker
 * always passes `getCoreModule`), but jco emits it; `once` sites may appear at most once, so a
 * copy pasted in by a name is refused.
 */
const PREAMBLE: readonly { name: string; text: string; once: boolean }[] = [
  { name: 'isNode', once: true, text: "const isNode = typeof process !== 'undefined' && process.versions && process.versions.node;" },
  { name: '_fs', once: true, text: 'let _fs;' },
  {
    name: 'fetchCompile', once: true,
    text: `async function fetchCompile (url) {
      if (isNode) {
        _fs = _fs || await import('node:fs/promises');
        return WebAssembly.compile(await _fs.readFile(url));
      }
      return fetch(url).then(WebAssembly.compileStreaming);
    }`,
  },
  { name: 'default getCoreModule', once: true, text: 'if (!getCoreModule) getCoreModule = (name) => fetchCompile(new URL(`./${name}`, import.meta.url));' },
  { name: 'debug gate', once: false, text: 'if (!globalThis?.process?.env?.JCO_DEBUG) { return; }' },
  { name: 'may-block flag', once: false, text: "const CURRENT_TASK_MAY_BLOCK= globalThis.WebAssembly ? new globalThis.WebAssembly.Global({ value: 'i32', mutable: true }, 0) : false;" },
];
/** The preamble's own bindings: referring to them anywhere else is refused. */
const PREAMBLE_BINDINGS: ReadonlySet<string> = new Set(['isNode', '_fs', 'fetchCompile']);
/** Words a preamble site contains; a statement without one is never compared. */
const PREAMBLE_HINT = /isNode|_fs|fetchCompile|getCoreModule|JCO_DEBUG|CURRENT_TASK_MAY_BLOCK/;

const PARSE_OPTIONS = { ecmaVersion: 'latest', sourceType: 'module', locations: true } as const;

function canonical(text: string): string | undefined {
  try {
    return [...tokenizer(text, PARSE_OPTIONS)].map((t) => text.slice(t.start, t.end)).join(' ');
  } catch {
    return undefined;
  }
}
const PREAMBLE_CANONICAL = new Map(PREAMBLE.map((site) => [canonical(site.text)!, site]));

/** Refuses jco output that reaches past what jco itself needs; see the file comment. */
export function inspectTranspiledJs(source: string, coreFiles: readonly string[]): TranspiledJsReport {
  let program: Program;
  try {
    program = parse(source, PARSE_OPTIONS);
  } catch (err) {
    throw new PluginLoadError(`the transpiled component's JavaScript does not parse: ${err instanceof Error ? err.message : String(err)}`);
  }
  const inspector = new Inspector(source, new Set(coreFiles));
  try {
    inspector.run(program);
  } catch (err) {
    if (err instanceof RangeError) throw new PluginLoadError('the transpiled component\'s JavaScript is nested too deeply to check');
    throw err;
  }
  const problems = inspector.problems;
  if (problems.length > 0) {
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
    throw new PluginLoadError(`the transpiled component's JavaScript is refused: ${problems.slice(0, 3).join('; ')}${more}`);
  }
  // The names are slices of `source` (acorn's literals): copied, or a cache keeping the report
  // keeps the whole text alive (700 KB per componentize-js component, for the process's life).
  return { coreInstantiations: inspector.instantiations.map(detached) };
}

/** A string with its own storage, not a view into the text it was cut from. */
function detached(slice: string): string {
  return Buffer.from(slice, 'utf8').toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// Scopes: enough of ECMAScript's (module code, so strict) to tell a global from a local name.

interface Binding {
  name: string;
  kind: 'var' | 'let' | 'const' | 'function' | 'class' | 'param' | 'catch' | 'import';
  /** For `const x = …`, its declarator (to resolve `moduleN` to its `getCoreModule(…)`). */
  declarator?: VariableDeclarator;
}

class Scope {
  readonly names = new Map<string, Binding>();
  constructor(readonly parent: Scope | null) {}
  lookup(name: string): Binding | undefined {
    for (let s: Scope | null = this; s; s = s.parent) {
      const b = s.names.get(name);
      if (b) return b;
    }
    return undefined;
  }
  declare(name: string, binding: Omit<Binding, 'name'>): void {
    this.names.set(name, { name, ...binding });
  }
}

type FunctionNode = Extract<AnyNode, { type: 'FunctionDeclaration' | 'FunctionExpression' | 'ArrowFunctionExpression' }>;
const isFunction = (n: AnyNode): n is FunctionNode =>
  n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression';
const LOOPS: ReadonlySet<string> = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);

function patternNames(p: Pattern | null | undefined, out: Identifier[] = []): Identifier[] {
  if (!p) return out;
  switch (p.type) {
    case 'Identifier': out.push(p); break;
    case 'ObjectPattern':
      for (const prop of p.properties) patternNames(prop.type === 'RestElement' ? prop.argument : prop.value, out);
      break;
    case 'ArrayPattern': for (const el of p.elements) patternNames(el, out); break;
    case 'RestElement': patternNames(p.argument, out); break;
    case 'AssignmentPattern': patternNames(p.left, out); break;
    default: break; // a member expression target declares nothing
  }
  return out;
}

function children(node: AnyNode): AnyNode[] {
  const out: AnyNode[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc' || key === 'start' || key === 'end' || key === 'type') continue;
    if (Array.isArray(value)) {
      for (const v of value) if (isAstNode(v)) out.push(v);
    } else if (isAstNode(value)) {
      out.push(value);
    }
  }
  return out;
}

function isAstNode(v: unknown): v is AnyNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

// ---------------------------------------------------------------------------------------------

class Inspector {
  readonly problems: string[] = [];
  readonly instantiations: string[] = [];
  /** `instantiate`'s parameters: `getCoreModule`, `imports`, `instantiateCore`. */
  private params: Binding[] = [];
  private instantiateFn: AnyNode | undefined;
  private instantiateBinding: Binding | undefined;
  private readonly selfNamed = new Map<AnyNode, Binding>();
  private readonly referenced = new Set<Binding>();
  private readonly seenOnce = new Set<string>();
  /** Inside a preamble site: its fixed text is trusted, its references are not refused. */
  private trusted = 0;
  private readonly path: AnyNode[] = [];

  constructor(private readonly source: string, private readonly coreFiles: ReadonlySet<string>) {}

  run(program: Program): void {
    const scope = new Scope(null);
    this.hoist(program.body, scope, scope);
    this.findInstantiate(program, scope);
    this.visitAll(program.body, scope);
    // A function that instantiates must run once: one that can name itself could call itself again.
    for (const [fn, self] of this.selfNamed) {
      if (this.referenced.has(self) && this.instantiatesInside(fn)) this.refuse(fn, `the function '${self.name}' that instantiates core modules refers to itself`);
    }
  }

  private where(node: AnyNode): string {
    const at = node.loc?.start;
    return at ? `${at.line}:${at.column + 1}` : `offset ${node.start}`;
  }

  private refuse(node: AnyNode, what: string): void {
    this.problems.push(`${what} at ${this.where(node)}`);
  }

  private findInstantiate(program: Program, scope: Scope): void {
    for (const stmt of program.body) {
      if (stmt.type === 'ExportNamedDeclaration' && stmt.declaration?.type === 'FunctionDeclaration' && stmt.declaration.id?.name === 'instantiate') {
        const fn = stmt.declaration;
        const [getCoreModule, imports, hook] = fn.params;
        const hookOk = hook?.type === 'AssignmentPattern' && hook.left.type === 'Identifier' && hook.left.name === 'instantiateCore';
        if (fn.params.length !== 3 || getCoreModule?.type !== 'Identifier' || getCoreModule.name !== 'getCoreModule' ||
            imports?.type !== 'Identifier' || imports.name !== 'imports' || !hookOk) {
          this.refuse(fn, 'instantiate() does not take (getCoreModule, imports, instantiateCore = WebAssembly.instantiate)');
          return;
        }
        this.instantiateFn = fn;
        this.instantiateBinding = scope.names.get('instantiate');
        return;
      }
    }
    this.refuse(program, 'there is no exported instantiate() function');
  }

  /** Declares what a list of statements hoists: `var`s into `fnScope`, lexical names into `scope`. */
  private hoist(statements: readonly AnyNode[], scope: Scope, fnScope: Scope): void {
    for (const s of statements) this.hoistVars(s, fnScope);
    for (const s of statements) this.hoistLexical(s, scope);
  }

  private hoistVars(node: AnyNode, fnScope: Scope): void {
    if (isFunction(node) || node.type === 'ClassDeclaration' || node.type === 'ClassExpression') return;
    if (node.type === 'VariableDeclaration' && node.kind === 'var') {
      for (const d of node.declarations) for (const id of patternNames(d.id)) fnScope.declare(id.name, { kind: 'var' });
    }
    for (const c of children(node)) {
      if (c.type.endsWith('Statement') || c.type === 'VariableDeclaration' || c.type === 'SwitchCase' || c.type === 'CatchClause' ||
          c.type === 'ExportNamedDeclaration') {
        this.hoistVars(c, fnScope);
      }
    }
  }

  private hoistLexical(node: AnyNode, scope: Scope): void {
    const decl = node.type === 'ExportNamedDeclaration' || node.type === 'ExportDefaultDeclaration' ? node.declaration : node;
    if (!decl) return;
    switch (decl.type) {
      case 'VariableDeclaration':
        if (decl.kind === 'var') return;
        for (const d of decl.declarations) {
          for (const id of patternNames(d.id)) scope.declare(id.name, { kind: decl.kind === 'const' ? 'const' : 'let', declarator: d });
        }
        return;
      case 'FunctionDeclaration':
      case 'ClassDeclaration':
        if (decl.id) scope.declare(decl.id.name, { kind: decl.type === 'FunctionDeclaration' ? 'function' : 'class' });
        return;
      case 'ImportDeclaration':
        for (const spec of decl.specifiers) scope.declare(spec.local.name, { kind: 'import' });
        return;
      default:
        return;
    }
  }

  private visitAll(nodes: readonly AnyNode[], scope: Scope): void {
    for (const n of nodes) this.visit(n, scope);
  }

  private visit(node: AnyNode, scope: Scope): void {
    const site = this.preambleSite(node);
    if (site) this.trusted++;
    this.path.push(node);
    try {
      this.check(node, scope);
      this.descend(node, scope);
    } finally {
      this.path.pop();
      if (site) this.trusted--;
    }
  }

  /** Whether `node` is one of jco's preamble statements, word for word. */
  private preambleSite(node: AnyNode): boolean {
    if (node.type !== 'VariableDeclaration' && node.type !== 'FunctionDeclaration' && node.type !== 'IfStatement') return false;
    if (node.end - node.start > 1000) return false;
    const text = this.source.slice(node.start, node.end);
    if (!PREAMBLE_HINT.test(text)) return false;
    const site = PREAMBLE_CANONICAL.get(canonical(text) ?? '');
    if (!site) return false;
    if (site.once) {
      if (this.seenOnce.has(site.name)) {
        this.refuse(node, `a second copy of jco's ${site.name} preamble`);
        return false;
      }
      this.seenOnce.add(site.name);
    }
    return true;
  }

  /** Scope-creating nodes and binding positions; everything else visits its children. */
  private descend(node: AnyNode, scope: Scope): void {
    switch (node.type) {
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression': {
        const inner = new Scope(scope);
        if (node.type === 'FunctionExpression' && node.id) {
          inner.declare(node.id.name, { kind: 'function' });
          this.selfNamed.set(node, inner.names.get(node.id.name)!);
        }
        for (const p of node.params) for (const id of patternNames(p)) inner.declare(id.name, { kind: 'param' });
        // Every function has its own `arguments` but instantiate(): there `arguments[2]` would be
        // instantiateCore under another name, so it stays undeclared and is refused as a global.
        if (node.type !== 'ArrowFunctionExpression' && node !== this.instantiateFn) inner.declare('arguments', { kind: 'param' });
        if (node === this.instantiateFn) this.params = ['getCoreModule', 'imports', 'instantiateCore'].map((n) => inner.names.get(n)!);
        for (const p of node.params) this.visitPattern(p, inner);
        if (node.body.type === 'BlockStatement') {
          this.hoist(node.body.body, inner, inner);
          this.path.push(node.body);
          this.visitAll(node.body.body, inner);
          this.path.pop();
        } else {
          this.visit(node.body, inner);
        }
        return;
      }
      case 'ClassDeclaration':
      case 'ClassExpression': {
        const inner = new Scope(scope);
        if (node.id) inner.declare(node.id.name, { kind: 'class' });
        if (node.superClass) this.visit(node.superClass, scope);
        this.visit(node.body, inner);
        return;
      }
      case 'BlockStatement':
      case 'StaticBlock': {
        // A block's `var`s were hoisted with its function's; only its lexical names are its own.
        const inner = new Scope(scope);
        if (node.type === 'StaticBlock') this.hoist(node.body, inner, inner);
        else for (const s of node.body) this.hoistLexical(s, inner);
        this.visitAll(node.body, inner);
        return;
      }
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement': {
        const inner = new Scope(scope);
        const head = node.type === 'ForStatement' ? node.init : node.left;
        if (head?.type === 'VariableDeclaration' && head.kind !== 'var') this.hoistLexical(head, inner);
        this.visitAll(children(node), inner);
        return;
      }
      case 'SwitchStatement': {
        this.visit(node.discriminant, scope);
        const inner = new Scope(scope);
        for (const c of node.cases) for (const s of c.consequent) this.hoistLexical(s, inner);
        this.visitAll(node.cases, inner);
        return;
      }
      case 'CatchClause': {
        const inner = new Scope(scope);
        for (const id of patternNames(node.param)) inner.declare(id.name, { kind: 'catch' });
        if (node.param) this.visitPattern(node.param, inner);
        this.visit(node.body, inner);
        return;
      }
      case 'VariableDeclarator':
        this.visitPattern(node.id, scope);
        if (node.init) this.visit(node.init, scope);
        return;
      case 'Identifier':
        this.reference(node, scope);
        return;
      case 'MemberExpression':
        this.visit(node.object, scope);
        if (node.computed) this.visit(node.property, scope);
        return;
      case 'Property':
      case 'PropertyDefinition':
      case 'MethodDefinition':
        if (node.computed) this.visit(node.key, scope);
        if (node.value) this.visit(node.value, scope);
        return;
      case 'LabeledStatement':
        this.visit(node.body, scope);
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
      case 'MetaProperty':
      case 'ImportDeclaration':
        return;
      case 'ExportSpecifier':
        if (node.local.type === 'Identifier') this.reference(node.local, scope);
        return;
      default:
        this.visitAll(children(node), scope);
    }
  }

  /** A binding pattern: its names are declarations, its defaults and computed keys are code. */
  private visitPattern(p: Pattern, scope: Scope): void {
    switch (p.type) {
      case 'Identifier':
        return;
      case 'ObjectPattern':
        for (const prop of p.properties) {
          if (prop.type === 'RestElement') this.visitPattern(prop.argument, scope);
          else {
            if (prop.computed) this.visit(prop.key, scope);
            this.visitPattern(prop.value, scope);
          }
        }
        return;
      case 'ArrayPattern':
        for (const el of p.elements) if (el) this.visitPattern(el, scope);
        return;
      case 'RestElement':
        return this.visitPattern(p.argument, scope);
      case 'AssignmentPattern':
        this.visitPattern(p.left, scope);
        this.path.push(p);
        try {
          this.visit(p.right, scope);
        } finally {
          this.path.pop();
        }
        return;
      default:
        this.visit(p, scope);
    }
  }

  /** Checks on the node itself (not its children). */
  private check(node: AnyNode, scope: Scope): void {
    if (this.trusted > 0) return;
    switch (node.type) {
      case 'ImportExpression':
        this.refuse(node, 'a dynamic import()');
        return;
      case 'MetaProperty':
        if (node.meta.name === 'import') this.refuse(node, 'import.meta');
        return;
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
      case 'ExportNamedDeclaration': {
        const from = node.source;
        if (from && !ALLOWED_IMPORT_SOURCES.has(String(from.value))) {
          this.refuse(node, `${node.type === 'ImportDeclaration' ? 'an import' : 'an export'} from ${JSON.stringify(String(from.value))}`);
        }
        return;
      }
      case 'ExportDefaultDeclaration':
        this.refuse(node, 'a default export');
        return;
      case 'MemberExpression': {
        const name = !node.computed && node.property.type === 'Identifier' ? node.property.name
          : node.property.type === 'Literal' && typeof node.property.value === 'string' ? node.property.value : undefined;
        if (name !== undefined && FORBIDDEN_PROPERTIES.has(name)) this.refuse(node, `access to .${name}`);
        if (node.computed && isBuiltString(node.property)) this.refuse(node, 'a property name built at run time from strings');
        else if (node.computed && !COMPUTED_KEYS.has(node.property.type)) this.refuse(node, `a property name computed by ${describeKey(node.property.type)}`);
        return;
      }
      case 'Literal':
        if (typeof node.value === 'string' && FORBIDDEN_PROPERTIES.has(node.value)) this.refuse(node, `the string ${JSON.stringify(node.value)}`);
        return;
      case 'CallExpression':
        this.checkInstantiateCall(node, scope);
        return;
      default:
        return;
    }
  }

  private reference(id: Identifier, scope: Scope): void {
    const binding = scope.lookup(id.name);
    if (binding) this.referenced.add(binding);
    if (this.trusted > 0) return;
    const parent = this.path[this.path.length - 2];
    if (!binding) return this.globalReference(id, parent);
    if (PREAMBLE_BINDINGS.has(id.name)) return this.refuse(id, `a reference to jco's preamble '${id.name}' outside it`);
    if (binding === this.instantiateBinding) return this.refuse(id, 'a reference to instantiate() inside its own module');
    const param = this.params.indexOf(binding);
    if (param === 0 && !(parent?.type === 'CallExpression' && parent.callee === id && this.isModuleDeclarator())) {
      return this.refuse(id, 'getCoreModule used other than in `const moduleN = getCoreModule(\'file\')`');
    }
    if (param === 1 && !(parent?.type === 'MemberExpression' && parent.object === id && !this.isAssignmentTarget(parent))) {
      return this.refuse(id, 'imports used other than read as imports[…]');
    }
    if (param === 2 && !(parent?.type === 'CallExpression' && parent.callee === id)) {
      return this.refuse(id, 'instantiateCore used other than called');
    }
  }

  private globalReference(id: Identifier, parent: AnyNode | undefined): void {
    const members = MEMBER_ONLY_GLOBALS.get(id.name);
    if (members) {
      const member = parent?.type === 'MemberExpression' && parent.object === id && !parent.computed && parent.property.type === 'Identifier'
        ? parent.property.name : undefined;
      if (member !== undefined && members.has(member)) return;
      if (id.name === 'WebAssembly' && member === 'instantiate' && this.isHookDefault()) return;
      return this.refuse(id, member === undefined ? `${id.name} used other than as ${id.name}.<member>` : `${id.name}.${member}`);
    }
    if (!SAFE_GLOBALS.has(id.name)) this.refuse(id, `the global '${id.name}'`);
  }

  /** `instantiateCore = WebAssembly.instantiate`, the default of instantiate()'s third parameter. */
  private isHookDefault(): boolean {
    const p = this.path;
    const fn = this.instantiateFn;
    return fn !== undefined && isFunction(fn) && p[p.length - 3] === fn.params[2] && p[p.length - 4] === fn;
  }

  /** The call being checked is the init of a `const` declarator (`const module0 = getCoreModule(…)`). */
  private isModuleDeclarator(): boolean {
    const declarator = this.path[this.path.length - 3];
    const declaration = this.path[this.path.length - 4];
    return declarator?.type === 'VariableDeclarator' && declaration?.type === 'VariableDeclaration' && declaration.kind === 'const';
  }

  private isAssignmentTarget(member: AnyNode): boolean {
    const above = this.path[this.path.length - 3];
    return (above?.type === 'AssignmentExpression' && above.left === member) || (above?.type === 'UpdateExpression') ||
      above?.type === 'ObjectPattern' || above?.type === 'ArrayPattern' || above?.type === 'Property';
  }

  /** `instantiateCore(<yield|await> moduleN, …)`: which file, and that it runs at most once. */
  private checkInstantiateCall(call: CallExpression, scope: Scope): void {
    if (call.callee.type !== 'Identifier' || scope.lookup(call.callee.name) !== this.params[2] || !this.params[2]) return;
    const file = this.resolveModule(call, scope);
    if (file === undefined) return;
    for (let i = this.path.length - 2; i >= 0; i--) {
      const above = this.path[i]!;
      if (above === this.instantiateFn) {
        this.instantiations.push(file);
        return;
      }
      if (LOOPS.has(above.type)) return this.refuse(call, 'instantiateCore called inside a loop');
      if (isFunction(above)) {
        const caller = this.path[i - 1];
        const iife = above.type !== 'FunctionDeclaration' && caller?.type === 'CallExpression' && caller.callee === above;
        if (!iife) return this.refuse(call, 'instantiateCore called inside a function that could run more than once');
      }
      if (above.type === 'ClassBody' || above.type === 'StaticBlock') return this.refuse(call, 'instantiateCore called inside a class');
    }
    this.refuse(call, 'instantiateCore called outside instantiate()');
  }

  private resolveModule(call: CallExpression, scope: Scope): string | undefined {
    let arg: AnyNode | undefined = call.arguments[0];
    if ((arg?.type === 'YieldExpression' && !arg.delegate) || arg?.type === 'AwaitExpression') arg = arg.argument ?? undefined;
    if (arg?.type !== 'Identifier') {
      this.refuse(call, 'instantiateCore called on something other than a module constant');
      return undefined;
    }
    const binding = scope.lookup(arg.name);
    const init = binding?.kind === 'const' ? binding.declarator?.init : undefined;
    const file = init?.type === 'CallExpression' && init.callee.type === 'Identifier' && init.callee.name === 'getCoreModule' &&
      init.arguments.length === 1 && init.arguments[0]?.type === 'Literal' && typeof init.arguments[0].value === 'string'
      ? init.arguments[0].value : undefined;
    if (file === undefined) {
      this.refuse(call, `instantiateCore called on '${arg.name}', which is not a const getCoreModule('…')`);
      return undefined;
    }
    if (!this.coreFiles.has(file)) {
      this.refuse(call, `instantiateCore called on ${JSON.stringify(file)}, which is not one of the component's core modules`);
      return undefined;
    }
    return file;
  }

  private instantiatesInside(fn: AnyNode): boolean {
    return this.source.slice(fn.start, fn.end).includes('instantiateCore');
  }
}

/**
 * What jco writes between `[` and `]`: a literal, a name, `i++`, arithmetic, `a.b`. Never a call
 * (`f[decode(bytes)]`), a conditional, a sequence or an `await`: shapes that hide a name.
 */
const COMPUTED_KEYS: ReadonlySet<string> = new Set(['Literal', 'Identifier', 'UpdateExpression', 'BinaryExpression', 'MemberExpression']);

function describeKey(type: string): string {
  return type.replace(/Expression$/, '').replace(/[A-Z]/g, (c, at: number) => (at === 0 ? '' : ' ') + c.toLowerCase()) + ' expression';
}

/** A computed key made of strings at run time: `'con' + 'structor'`, `` `${a}` ``, `s.concat(…)`. */
function isBuiltString(key: AnyNode): boolean {
  if (key.type === 'TemplateLiteral') return key.expressions.length > 0;
  if (key.type === 'BinaryExpression' && key.operator === '+') {
    const strish = (n: AnyNode): boolean => (n.type === 'Literal' && typeof n.value === 'string') || n.type === 'TemplateLiteral' || isBuiltString(n);
    return strish(key.left) || strish(key.right);
  }
  return false;
}

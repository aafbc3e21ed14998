import { PluginLoadError } from '../errors.js';
import { COMPONENT_VERSION, CORE_VERSION, WASM_MAGIC, WasmReader, skipLimits, skipValType } from './wasm-reader.js';

/**
 * The characters a core or component name may use. jco pastes names into the JavaScript it
 * generates (between quotes, as property keys), so a name is code until proven otherwise. The set
 * covers what the component model's name grammar and real toolchains produce, and nothing that
 * can end a string literal, a template literal, a comment or a line:
 *
 *   letters, digits           labels, core names (`memory`, `cabi_realloc`, `_start`, `0`)
 *   - _                       kebab labels, C-style core names (`wasi_snapshot_preview1`)
 *   . : / @ +                 interface names with semver (`wasi:io/streams@0.2.0`, `1.0.0+build.5`)
 *   #                         wit-component's export names (`chatty:plugin/plugin@0.3.0#invoke-tool`)
 *   |                         the standard core names (`cm32p2|chatty:plugin/plugin@0.3|invoke-tool`)
 *   [ ]                       annotated names (`[method]stream.read`, `[resource-drop]x`, `[export]…`)
 *   $                         wit-component's internal instances (`$imports`, `$root`)
 *
 * No quotes, backslashes, backticks, braces, parentheses, `*`, `=`, `,`, `<`, `>`, spaces, control
 * characters or bytes over 0x7f. That leaves out the component model's dependency names
 * (`unlocked-dep=<…>`, `url=<…>`, `integrity=<…>`), which a plugin has no use for.
 */
const NAME_BYTE = (() => {
  const ok = new Uint8Array(256);
  const set = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@+#|[]$';
  for (let i = 0; i < set.length; i++) ok[set.charCodeAt(i)] = 1;
  return ok;
})();

/** Longer than any name a toolchain emits; bounds what an error message quotes, too. */
export const MAX_NAME_BYTES = 1024;

/** Nested components deeper than this are refused (jco flattens them; a plugin needs one or two). */
const MAX_NESTING = 16;

/** What the walk found: every name it checked (for tests and diagnostics). */
export interface NameReport {
  names: number;
}

/**
 * Refuses a component any of whose core or component names falls outside the allow-list above,
 * before anything is transpiled. Walks the component binary: nested core modules (their import
 * and export names), core instances (instantiation arguments, inline exports), aliases, component
 * imports, exports and instances, and nested components, recursively. Component type definitions
 * (section 7) are skipped: their labels are kebab-case, which the validator enforces, and jco
 * generates no code from a core type. Core type definitions (section 3) and value sections, which
 * no plugin toolchain emits, are refused outright rather than half understood.
 */
export function checkComponentNames(bytes: Uint8Array): NameReport {
  const r = new WasmReader(bytes, 'cannot read the component');
  if (bytes.length < 8 || r.u32le() !== WASM_MAGIC) throw new PluginLoadError('cannot read the component: not a WebAssembly binary');
  const version = r.u32le();
  if (version !== COMPONENT_VERSION) {
    throw new PluginLoadError(
      version === CORE_VERSION ? 'cannot read the component: this is a core module, not a component' : `cannot read the component: unsupported version 0x${version.toString(16)}`,
    );
  }
  const report: NameReport = { names: 0 };
  walkComponent(r, report, 0);
  return report;
}

function walkComponent(r: WasmReader, report: NameReport, depth: number): void {
  if (depth > MAX_NESTING) throw r.error(`components nested more than ${MAX_NESTING} deep`);
  const check = (raw: Uint8Array, where: string): void => checkName(raw, where, report);
  while (!r.done()) {
    const { id, body } = r.section();
    switch (id) {
      case 0: // custom: jco ignores custom sections
      case 7: // component types: kebab labels, checked by the validator
      case 8: // canonical functions: indices and options, no names
        break;
      case 1: // a core module
        walkCoreModule(body, check);
        break;
      case 2: // core instances
        for (let n = body.count(), i = 0; i < n; i++) {
          const form = body.byte();
          if (form === 0x00) {
            body.leb(); // module index
            for (let k = body.count(), j = 0; j < k; j++) {
              check(body.name(), 'a core instantiation argument');
              if (body.byte() !== 0x12) throw body.error('a core instantiation argument that is not an instance');
              body.leb();
            }
          } else if (form === 0x01) {
            for (let k = body.count(), j = 0; j < k; j++) {
              check(body.name(), 'a core instance export');
              body.byte(); // core sort
              body.leb();
            }
          } else {
            throw body.error(`unknown core instance form 0x${form.toString(16)}`);
          }
        }
        break;
      case 3:
        throw body.error('core type definitions are not accepted in a plugin component');
      case 4: // a nested component
        if (body.u32le() !== WASM_MAGIC || body.u32le() !== COMPONENT_VERSION) throw body.error('a nested component with a bad header');
        walkComponent(body, report, depth + 1);
        break;
      case 5: // component instances
        for (let n = body.count(), i = 0; i < n; i++) {
          const form = body.byte();
          if (form === 0x00) {
            body.leb(); // component index
            for (let k = body.count(), j = 0; j < k; j++) {
              check(body.name(), 'an instantiation argument');
              sortIdx(body);
            }
          } else if (form === 0x01) {
            for (let k = body.count(), j = 0; j < k; j++) {
              check(externName(body), 'an instance export');
              sortIdx(body);
            }
          } else {
            throw body.error(`unknown instance form 0x${form.toString(16)}`);
          }
        }
        break;
      case 6: // aliases
        for (let n = body.count(), i = 0; i < n; i++) {
          sort(body);
          const target = body.byte();
          if (target === 0x00 || target === 0x01) {
            body.leb(); // instance index
            check(body.name(), target === 0x00 ? 'an export alias' : 'a core export alias');
          } else if (target === 0x02) {
            body.leb();
            body.leb();
          } else {
            throw body.error(`unknown alias target 0x${target.toString(16)}`);
          }
        }
        break;
      case 9: // start: indices only
        break;
      case 10: // imports
        for (let n = body.count(), i = 0; i < n; i++) {
          check(externName(body), 'an import');
          externDesc(body);
        }
        break;
      case 11: // exports
        for (let n = body.count(), i = 0; i < n; i++) {
          check(externName(body), 'an export');
          sortIdx(body);
          const described = body.byte();
          if (described === 0x01) externDesc(body);
          else if (described !== 0x00) throw body.error(`bad export type flag 0x${described.toString(16)}`);
        }
        break;
      default:
        throw body.error(`section ${id} is not accepted in a plugin component`);
    }
    if (id !== 0 && id !== 7 && id !== 8 && id !== 9 && !body.done()) throw body.error(`section ${id} has ${body.end - body.pos} bytes left over`);
  }
}

/** A core module's import (module and field) and export names. */
function walkCoreModule(r: WasmReader, check: (raw: Uint8Array, where: string) => void): void {
  if (r.u32le() !== WASM_MAGIC || r.u32le() !== CORE_VERSION) throw r.error('a core module with a bad header');
  while (!r.done()) {
    const { id, body } = r.section();
    if (id === 2) {
      for (let n = body.count(), i = 0; i < n; i++) {
        check(body.name(), 'a core import module name');
        check(body.name(), 'a core import name');
        coreImportDesc(body);
      }
    } else if (id === 7) {
      for (let n = body.count(), i = 0; i < n; i++) {
        check(body.name(), 'a core export name');
        body.byte();
        body.leb();
      }
    }
  }
}

function coreImportDesc(r: WasmReader): void {
  const kind = r.byte();
  switch (kind) {
    case 0x00: // func: type index
      r.leb();
      return;
    case 0x01: // table: reftype + limits
      skipValType(r);
      skipLimits(r);
      return;
    case 0x02: // memory: limits
      skipLimits(r);
      return;
    case 0x03: // global: valtype + mutability
      skipValType(r);
      r.byte();
      return;
    case 0x04: // tag: attribute + type index
      r.byte();
      r.leb();
      return;
    default:
      throw r.error(`unknown core import kind 0x${kind.toString(16)}`);
  }
}

/** importname' / exportname': 0x00 name, or 0x01 name (older encoders: an interface name). */
function externName(r: WasmReader): Uint8Array {
  const form = r.byte();
  if (form !== 0x00 && form !== 0x01) throw r.error(`unknown name form 0x${form.toString(16)}`);
  return r.name();
}

function sort(r: WasmReader): void {
  const s = r.byte();
  if (s === 0x00) r.byte(); // core sort
  else if (s > 0x05) throw r.error(`unknown sort 0x${s.toString(16)}`);
}

function sortIdx(r: WasmReader): void {
  sort(r);
  r.leb();
}

function externDesc(r: WasmReader): void {
  const kind = r.byte();
  switch (kind) {
    case 0x00: // core module: 0x11 + core type index
      if (r.byte() !== 0x11) throw r.error('a core extern that is not a module');
      r.leb();
      return;
    case 0x01: // func
    case 0x04: // component
    case 0x05: // instance
      r.leb();
      return;
    case 0x02: // value bound
      if (r.byte() === 0x00) r.leb();
      else r.sleb();
      return;
    case 0x03: // type bound: eq typeidx | sub resource
      if (r.byte() === 0x00) r.leb();
      return;
    default:
      throw r.error(`unknown extern kind 0x${kind.toString(16)}`);
  }
}

function checkName(raw: Uint8Array, where: string, report: NameReport): void {
  report.names++;
  if (raw.length > MAX_NAME_BYTES) throw new PluginLoadError(`component: ${where} is ${raw.length} bytes long, over ${MAX_NAME_BYTES}`);
  for (let i = 0; i < raw.length; i++) {
    if (NAME_BYTE[raw[i]!] === 0) {
      throw new PluginLoadError(
        `component: ${where} ${quote(raw)} has a character outside the allowed set (letters, digits and - _ . : / @ + # | [ ] $): refused before transpiling`,
      );
    }
  }
}

/** The name as JSON, cut short: safe to print, whatever it holds. */
function quote(raw: Uint8Array): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(raw.subarray(0, 80));
  return JSON.stringify(text) + (raw.length > 80 ? '…' : '');
}

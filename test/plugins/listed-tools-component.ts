import { readFile } from 'node:fs/promises';
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';

/**
 * A hand-written `chatty:plugin@0.3.0` component whose `list-tools` answers exactly the tools
 * given (names, descriptions and schemas as raw strings, whatever a hostile author would put
 * there) and whose `invoke-tool` answers every call with its arguments-json. Built with
 * wasm-tools in milliseconds.
 */
export interface ListedTool {
  name: string;
  description?: string;
  schema?: string;
}

const WIT_URL = new URL('../../main/plugins/wit/plugin.wit', import.meta.url);
const IFACE = 'chatty:plugin/plugin@0.3.0';
/** Where the return area is, past the tools' data: the data may be larger than 8 KiB (a deep schema). */
const MIN_RET = 8192;

export async function listedToolsComponent(tools: readonly ListedTool[]): Promise<Uint8Array> {
  const bytes: number[] = [];
  const base = 16;
  const put = (b: Uint8Array | number[], align = 1): number => {
    while ((base + bytes.length) % align !== 0) bytes.push(0);
    const at = base + bytes.length;
    for (const byte of b) bytes.push(byte); // not push(...b): a deep schema is more bytes than a call takes arguments
    return at;
  };
  const str = (s: string): [number, number] => {
    const b = new TextEncoder().encode(s);
    return [put(b), b.length];
  };
  const u32s = (values: number[]): number => {
    const b = new Uint8Array(values.length * 4);
    const view = new DataView(b.buffer);
    values.forEach((v, i) => view.setUint32(i * 4, v, true));
    return put(b, 4);
  };
  const records: number[] = [];
  for (const tool of tools) records.push(...str(tool.name), ...str(tool.description ?? ''), ...str(tool.schema ?? '{"type":"object"}'));
  const list = u32s([records.length > 0 ? u32s(records) : 64, tools.length]);
  const meta = u32s([...str('listed-tools'), ...str('1.0.0'), ...str('listed tools'), 64, 0, 64, 0]);
  const RET = Math.max(MIN_RET, (base + bytes.length + 15) & ~7);
  const HEAP = Math.max(16384, (RET + 64 + 7) & ~7);
  const pages = Math.ceil((HEAP + 65536) / 65536);
  const escaped = bytes.map((b) => `\\${b.toString(16).padStart(2, '0')}`).join('');
  const wat = `(module
  (memory (export "memory") ${pages})
  (global $bump (mut i32) (i32.const ${HEAP}))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $bump) (i32.const 7)) (i32.const -8)))
    (global.set $bump (i32.add (local.get $p) (local.get 3)))
    (if (i32.gt_u (global.get $bump) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.const 16)))))
    (local.get $p))
  (func (export "${IFACE}#metadata") (result i32) (i32.const ${meta}))
  (func (export "${IFACE}#list-tools") (result i32) (i32.const ${list}))
  (func (export "${IFACE}#invoke-tool") (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
    (i32.store8 (i32.const ${RET}) (i32.const 0))
    (i32.store (i32.const ${RET + 4}) (local.get 2))
    (i32.store (i32.const ${RET + 8}) (local.get 3))
    (i32.store8 (i32.const ${RET + 12}) (i32.const 0))
    (i32.const ${RET}))
  (func (export "cabi_post_${IFACE}#invoke-tool") (param i32) (global.set $bump (i32.const ${HEAP})))
  (data (i32.const ${base}) "${escaped}"))`;
  const wit = await readFile(WIT_URL, 'utf8');
  return componentNew(await componentEmbed({ binary: await parse(wat), witSource: wit, world: 'plugin-world' }));
}

/**
 * Components built the way an attacker builds them: a fixture component printed to component
 * text with wasm-tools, edited as text (names swapped, core modules and instances added, a lift
 * pointed elsewhere), and parsed back. Nothing here goes through wit-component, which would
 * normalise what the attack depends on; jco sees exactly these bytes.
 */
import { parse, print } from '@bytecodealliance/jco-transpile/wasm-tools';
import { buildFixture } from './wasm-fixtures.js';

const IFACE = 'chatty:plugin/plugin@0.3.0';

/** Replaces every occurrence of `from` (a literal) in `text`, insisting there was at least one. */
function swap(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`attack fixture: ${JSON.stringify(from)} not found in the printed component`);
  return text.split(from).join(to);
}

/** Inserts `what` before the first line that starts with `anchor` (after indentation). */
function insertBefore(text: string, anchor: string, what: string): string {
  const at = text.search(new RegExp(`^\\s*${anchor.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
  if (at < 0) throw new Error(`attack fixture: no line starting with ${anchor}`);
  return `${text.slice(0, at)}${what}\n${text.slice(at)}`;
}

/**
 * The echo fixture whose core module exports its memory under a name that breaks out of jco's
 * quotes: loading it (before the sandbox's name check) runs `payload` in the module's worker.
 */
export async function injectionComponent(payload: string): Promise<Uint8Array> {
  const wat = await print(await buildFixture('echo'));
  const name = `x'] ?? (() => { ${payload} })(), ['x`;
  return parse(swap(wat, '"memory"', JSON.stringify(name)));
}

/**
 * The hostile fixture with the standard core names of newer toolchains: `cm32p2|…` exports,
 * `cm32p2_memory`, and the logging import under `cm32p2|chatty:plugin/logging@0.3`. Name-based
 * guards see none of the names they look for.
 */
export async function standardNamesComponent(): Promise<Uint8Array> {
  let wat = await print(await buildFixture('hostile'));
  for (const fn of ['invoke-tool', 'list-tools', 'metadata']) wat = swap(wat, `"${IFACE}#${fn}"`, `"cm32p2|chatty:plugin/plugin@0.3|${fn}"`);
  wat = swap(wat, `"cabi_post_${IFACE}#invoke-tool"`, '"cm32p2|chatty:plugin/plugin@0.3|invoke-tool_post"');
  wat = swap(wat, '"memory"', '"cm32p2_memory"');
  wat = swap(wat, '"cabi_realloc"', '"cm32p2_realloc"');
  wat = swap(wat, '(import "chatty:plugin/logging@0.3.0" "log"', '(import "cm32p2|chatty:plugin/logging@0.3" "log"');
  wat = swap(wat, '(with "chatty:plugin/logging@0.3.0" (instance', '(with "cm32p2|chatty:plugin/logging@0.3" (instance');
  return parse(wat);
}

/**
 * The echo fixture whose `invoke-tool` is lifted from a second core instance with a memory of its
 * own: the function answers 16 MiB of 'A' from there. A guard that inspects the first instance's
 * memory, or looks for the plugin's export names, never sees the answer.
 */
export async function secondMemoryComponent(answerBytes = 16 * 1024 * 1024): Promise<Uint8Array> {
  const wat = await print(await buildFixture('echo'));
  const pages = Math.ceil(answerBytes / 65536) + 1;
  const second = `
  (core module $second
    (memory (export "mem2") 1)
    (func (export "realloc2") (param i32 i32 i32 i32) (result i32) (i32.const 1024))
    (func (export "answer") (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
      (if (i32.lt_u (memory.size) (i32.const ${pages}))
        (then (drop (memory.grow (i32.sub (i32.const ${pages}) (memory.size))))))
      (memory.fill (i32.const 65536) (i32.const 65) (i32.const ${answerBytes}))
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 65536))
      (i32.store (i32.const 24) (i32.const ${answerBytes}))
      (i32.store8 (i32.const 28) (i32.const 0))
      (i32.const 16)))
  (core instance $second-instance (instantiate $second))
  (alias core export $second-instance "mem2" (core memory $mem2))
  (alias core export $second-instance "answer" (core func $answer))
  (alias core export $second-instance "realloc2" (core func $realloc2))`;
  let out = insertBefore(wat, '(func $invoke-tool', second);
  out = out.replace(
    /\(func \$invoke-tool (\(;\d+;\) )?\(type (\d+)\) \(canon lift [^\n]*\)\)\n/,
    (_m, index: string | undefined, type: string) =>
      `(func $invoke-tool ${index ?? ''}(type ${type}) (canon lift (core func $answer) (memory $mem2) (realloc $realloc2) string-encoding=utf8))\n`,
  );
  if (!out.includes('(core func $answer) (memory $mem2)')) throw new Error('attack fixture: the invoke-tool lift was not rewritten');
  return parse(out);
}

/**
 * The echo fixture plus `count` instances of one small core module whose start function grows its
 * memory as far as it may and writes every byte (so the pages are resident). A per-memory cap lets
 * this component hold `count` times `max_memory_mb`.
 */
export async function manyMemoriesComponent(count = 64): Promise<Uint8Array> {
  const wat = await print(await buildFixture('echo'));
  const instances = Array.from({ length: count }, (_, i) => `  (core instance $cell${i} (instantiate $cell))`).join('\n');
  const cells = `
  (core module $cell
    (memory (export "m") 1)
    (func $fill
      (block $full (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        (br $more)))
      (memory.fill (i32.const 0) (i32.const 1) (i32.mul (memory.size) (i32.const 65536))))
    (start $fill))
${instances}`;
  return parse(insertBefore(wat, '(core instance $main', cells));
}

/**
 * What a plugin wrote for a model (module.toml's description, a tool's description, every string
 * and key of its schema) is judged for hidden characters on the gateway's main thread
 * (`hiddenIn`). Its joiner rule's lookbehind came first in the pattern, so V8 ran it at every
 * position: inside a run of k combining marks (Zalgo text, or U+FE0F/U+034F, themselves marks)
 * each position scanned back over the run, O(k²): 12,000 marks took ~5 s, and a 1 MiB
 * module.toml or list-tools answer holds ~500,000 (hours of a frozen main thread). CPU time, not
 * wall clock: the machine running this is loaded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { cpuDuring } from '../helpers/cpu-meter.js';
import { TEST_CACHE_DIR, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { listedToolsComponent, type ListedTool } from './listed-tools-component.js';

/** A letter and 12,000 combining acute accents: shown as one (tall) letter, nothing hidden in it. */
const MARKS = `a${'\u0301'.repeat(12_000)}`;
/** What a linear judging of a few such strings costs at most, with the load's own work (engine start, list-tools). */
const BOUND_MS = 600;

describe('a long run of combining marks is judged in linear time', () => {
  let root: string;
  let registry: ModuleRegistry;
  let n = 0;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-mark-runs-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** The CPU of loading a module (its outcome ignored: the description may be refused for its length). */
  const loadCpu = async (manifest: (name: string) => string, tools: readonly ListedTool[]): Promise<number> => {
    const component = await listedToolsComponent(tools);
    // Once unmeasured: the component transpiled and its JavaScript checked, as a cached load is.
    const warm = `warm-${n++}`;
    await registry.loadModule(writeModuleDir(root, warm, { manifest: fixtureManifest(warm), component })).catch(() => undefined);
    const name = `marks-${n++}`;
    const dir = writeModuleDir(root, name, { manifest: manifest(name), component });
    const { cpuMs } = await cpuDuring(() => registry.loadModule(dir).catch(() => undefined));
    return cpuMs;
  };

  it("module.toml's description", { timeout: 180_000 }, async () => {
    const manifest = (name: string): string => `[module]\nname = "${name}"\nversion = "1.0.0"\ndescription = "${MARKS}"\nwasm = "plugin.wasm"\n`;
    const cpuMs = await loadCpu(manifest, [{ name: 'greet' }]);
    console.log(`# a description of 12,000 marks: the load cost ${cpuMs.toFixed(0)} ms of CPU`);
    assert.ok(cpuMs < BOUND_MS, `loading it cost ${cpuMs.toFixed(0)} ms of CPU`);
  });

  it("a tool's description", { timeout: 180_000 }, async () => {
    const cpuMs = await loadCpu(fixtureManifest, [{ name: 'greet', description: MARKS }]);
    console.log(`# a tool description of 12,000 marks: the load cost ${cpuMs.toFixed(0)} ms of CPU`);
    assert.ok(cpuMs < BOUND_MS, `loading it cost ${cpuMs.toFixed(0)} ms of CPU`);
  });

  it('a key and a string of its schema', { timeout: 180_000 }, async () => {
    const schema = JSON.stringify({ type: 'object', properties: { p: { type: 'string', description: MARKS }, [MARKS]: { type: 'string' } } });
    const cpuMs = await loadCpu(fixtureManifest, [{ name: 'greet', schema }]);
    console.log(`# a schema key and string of 12,000 marks each: the load cost ${cpuMs.toFixed(0)} ms of CPU`);
    assert.ok(cpuMs < BOUND_MS, `loading it cost ${cpuMs.toFixed(0)} ms of CPU`);
  });

  // Emoji holding no hidden character (U+1F600 alone, a regional indicator alone) still went
  // through the emoji scan, whose \p{RGI_Emoji} costs V8 1-6 µs a position: ~1.7 s of the main
  // thread for a 1 MiB description, refused anyway for its length. Text with nothing hidden as it
  // is has nothing hidden once masked: the scan is skipped, as the log lines' rule already did.
  // And a text that does hold hidden characters was scanned whole before its length was asked:
  // U+1F600 U+200B 140,000 times cost ~1.4 s. A text surely over the 2,000 characters a person
  // reads (more than two UTF-16 units each) is refused for its length without the scan.
  it('emoji, a megabyte of them, with or without hidden characters between', { timeout: 180_000 }, async () => {
    for (const emoji of ['\u{1F600}', '\u{1F1E6}', '\u{1F600}\u200b']) {
      const text = emoji.repeat(emoji.length > 2 ? 140_000 : 200_000);
      const manifest = (name: string): string => `[module]\nname = "${name}"\nversion = "1.0.0"\ndescription = "${text}"\nwasm = "plugin.wasm"\n`;
      const cpuMs = await loadCpu(manifest, [{ name: 'greet' }]);
      console.log(`# a description of ${text.length / emoji.length} ${JSON.stringify(emoji)}: the load cost ${cpuMs.toFixed(0)} ms of CPU`);
      assert.ok(cpuMs < BOUND_MS, `loading it cost ${cpuMs.toFixed(0)} ms of CPU`);
    }
  });

  // A text holding one hidden character a simple rule masks (a no-break space, a joiner between
  // letters) went through the emoji scan whole: 1 MiB of served schema strings of U+1F600 U+00A0
  // cost ~1.6 s of the main thread at each load. Now only a run of emoji characters holding a
  // hidden one is scanned (hidden-text-runs.test.ts: the same answers as the whole scan).
  it('a megabyte of served schema strings, each emoji beside a no-break space', { timeout: 180_000 }, async () => {
    const text = '\u{1F600}\u00a0'.repeat(1000); // 2,000 characters: served
    const properties = Object.fromEntries(Array.from({ length: 160 }, (_, i) => [`p${i}`, { type: 'string', description: text }]));
    const cpuMs = await loadCpu(fixtureManifest, [{ name: 'greet', schema: JSON.stringify({ type: 'object', properties }) }]);
    console.log(`# a schema of 160 strings of 1,000 U+1F600 U+00A0: the load cost ${cpuMs.toFixed(0)} ms of CPU`);
    assert.ok(cpuMs < BOUND_MS, `loading it cost ${cpuMs.toFixed(0)} ms of CPU`);
  });
});

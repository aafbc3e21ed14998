import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ModuleRegistry, PluginLoadError } from '../../main/plugins/index.js';
import { TEST_CACHE_DIR, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';
import { listedToolsComponent } from './listed-tools-component.js';

/**
 * A refused schema's message quotes what the plugin wrote: it reaches the load's log line (an
 * embedder's logger, stderr) and a client's `tools/list` error. The plugin's text must be quoted as
 * tool names are (ASCII, escapes for the rest, bounded): a bidi override, a C1 CSI or a line
 * separator in a schema's `type`, in the schema itself or in the bytes JSON.parse stopped at must
 * not reach a log or a client raw, nor a megabyte of it.
 */
describe('a refused schema is quoted, never shown raw', () => {
  let root: string;
  let registry: ModuleRegistry;
  let n = 0;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'chatty-schema-quotes-'));
    registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } });
  });
  after(async () => {
    await registry.close();
    rmSync(root, { recursive: true, force: true });
  });

  const refusal = async (schema: string): Promise<string> => {
    const name = `quoted-${n++}`;
    const dir = writeModuleDir(root, name, { manifest: fixtureManifest(name), component: await listedToolsComponent([{ name: 'greet', schema }]) });
    const err = await registry.loadModule(dir).then(
      () => assert.fail('served'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof PluginLoadError, String(err));
    return err.message;
  };
  /** Printable ASCII, and the few non-ASCII letters the host's own words use. */
  const shownSafely = (message: string): void => {
    const raw = /[^\x20-\x7e–…]/.exec(message);
    assert.equal(raw, null, `the message carries U+${raw?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} raw: ${JSON.stringify(message.slice(0, 300))}`);
    assert.ok(message.length < 600, `the message quotes ${message.length} characters of the plugin's text`);
  };

  it("quotes a schema's type", async () => {
    shownSafely(await refusal(JSON.stringify({ type: 'obj\u202eect' })));
    shownSafely(await refusal(JSON.stringify({ type: '\u009b2J\u2028' })));
    shownSafely(await refusal(JSON.stringify({ type: 'x'.repeat(200_000) })));
  });

  it('quotes a schema that is not an object', async () => {
    shownSafely(await refusal(JSON.stringify('\u202eevil')));
    shownSafely(await refusal(JSON.stringify('y'.repeat(200_000))));
  });

  it("quotes where JSON.parse stopped", async () => {
    shownSafely(await refusal('{"type":"object"}\u202e\u009b'));
    shownSafely(await refusal(`{"a":1 \u2028${'z'.repeat(200_000)}`));
  });

  it('quotes a property that is not an object', async () => {
    shownSafely(await refusal(JSON.stringify({ type: 'object', properties: '\u202e'.repeat(3) + 'p'.repeat(100_000) })));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PluginLoadError, parseManifest } from '../../main/plugins/index.js';

const base = '[module]\nname = "m"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n';

function refusal(text: string): string {
  try {
    parseManifest(text);
  } catch (err) {
    assert.ok(err instanceof PluginLoadError);
    return err.message;
  }
  assert.fail('the manifest was accepted');
}

describe('module.toml', () => {
  it('fills in the defaults', () => {
    const { manifest, limits, warnings } = parseManifest(base);
    assert.equal(manifest.module.description, '');
    assert.equal(manifest.module.execution_mode, 'local');
    assert.deepEqual(manifest.protocols, { mcp: false, a2a: false });
    assert.deepEqual(manifest.config, {});
    assert.equal(manifest.files, undefined);
    assert.deepEqual(limits, { maxMemoryMb: 256, maxExecutionMs: 60_000, maxOutputBytes: 1024 * 1024, metadataTimeoutMs: 1000 });
    assert.deepEqual(warnings, []);
  });

  it('reads every table', () => {
    const { manifest, limits } = parseManifest(
      `${base}description = "d"\n[protocols]\nmcp = true\na2a = true\n[resources]\nmax_memory_mb = 64\nmax_execution_ms = 500\n` +
        '[config]\ngreeting = "hi"\n[files]\nroot = "data"\n',
    );
    assert.equal(manifest.module.description, 'd');
    assert.deepEqual(manifest.protocols, { mcp: true, a2a: true });
    assert.deepEqual(manifest.config, { greeting: 'hi' });
    assert.deepEqual(manifest.files, { root: 'data' });
    assert.equal(limits.maxMemoryMb, 64);
    assert.equal(limits.maxExecutionMs, 500);
  });

  it('treats 0 as the default and clamps above a ceiling with a warning', () => {
    const zero = parseManifest(`${base}[resources]\nmax_memory_mb = 0\nmax_execution_ms = 0\n`);
    assert.equal(zero.limits.maxMemoryMb, 256);
    assert.equal(zero.limits.maxExecutionMs, 60_000);
    assert.deepEqual(zero.warnings, []);
    const big = parseManifest(`${base}[resources]\nmax_memory_mb = 4096\nmax_execution_ms = 600000\n`);
    assert.equal(big.limits.maxMemoryMb, 256);
    assert.equal(big.limits.maxExecutionMs, 60_000);
    assert.equal(big.warnings.length, 2);
    assert.match(big.warnings[0]!, /max_memory_mb = 4096 is above the host ceiling; clamped to 256 MiB/);
    assert.match(big.warnings[1]!, /max_execution_ms = 600000 .* clamped to 60000 ms/);
  });

  it('clamps to lowered ceilings too', () => {
    const { limits, warnings } = parseManifest(`${base}[resources]\nmax_execution_ms = 900\n`, { maxMemoryMb: 256, maxExecutionMs: 500 });
    assert.equal(limits.maxExecutionMs, 500);
    assert.equal(warnings.length, 1);
  });

  it('refuses unknown keys and tables', () => {
    assert.match(refusal(`${base}colour = "red"\n`), /\[module\]: unknown key "colour"/);
    assert.match(refusal(`${base}[extras]\nx = 1\n`), /unknown key "extras"/);
    assert.match(refusal(`${base}[protocols]\nmcp = true\ngrpc = true\n`), /\[protocols\]: unknown key "grpc"/);
    assert.match(refusal(`${base}[resources]\nmax_cpu = 1\n`), /unknown key "max_cpu"/);
    assert.match(refusal(`${base}[files]\nroot = "d"\nwrite = true\n`), /unknown key "write"/);
  });

  it('requires a non-empty name and version', () => {
    assert.match(refusal('[module]\nversion = "1"\nwasm = "p.wasm"\n'), /\[module\] name/);
    assert.match(refusal('[module]\nname = "m"\nversion = ""\nwasm = "p.wasm"\n'), /\[module\] version: must not be empty/);
    assert.match(refusal('[module]\nname = ""\nversion = "1"\nwasm = "p.wasm"\n'), /\[module\] name: must not be empty/);
    assert.match(refusal('[module]\nname = "a/b"\nversion = "1"\nwasm = "p.wasm"\n'), /\[module\] name/);
  });

  it('requires wasm unless the module is remote', () => {
    assert.match(refusal('[module]\nname = "m"\nversion = "1"\n'), /wasm: is required unless execution_mode/);
    for (const mode of ['remote', 'remote_only']) {
      const { manifest } = parseManifest(`[module]\nname = "m"\nversion = "1"\nexecution_mode = "${mode}"\n`);
      assert.equal(manifest.module.execution_mode, mode);
    }
    assert.match(refusal(`${base}execution_mode = "cloud"\n`), /execution_mode/);
  });

  it('refuses paths that are not plain relative paths', () => {
    for (const bad of ['../p.wasm', 'a/../../p.wasm', '/abs/p.wasm', 'C:/p.wasm', 'dir\\p.wasm', 'c:p.wasm', '']) {
      assert.match(refusal(`[module]\nname = "m"\nversion = "1"\nwasm = ${JSON.stringify(bad)}\n`), /\[module\] wasm/, bad);
      assert.match(refusal(`${base}[files]\nroot = ${JSON.stringify(bad)}\n`), /\[files\] root/, bad);
    }
  });

  it('refuses wrong types and negative limits', () => {
    assert.match(refusal(`${base}[protocols]\nmcp = "yes"\n`), /\[protocols\] mcp/);
    assert.match(refusal(`${base}[resources]\nmax_memory_mb = -1\n`), /max_memory_mb/);
    assert.match(refusal(`${base}[resources]\nmax_execution_ms = 1.5\n`), /max_execution_ms/);
    assert.match(refusal(`${base}[config]\nn = 1\n`), /\[config\] n/);
  });

  it('refuses text that is not TOML', () => {
    assert.match(refusal('[module\nname = "m"'), /not valid TOML/);
    assert.match(refusal(`${base}name = "twice"\n`), /not valid TOML/);
  });
});

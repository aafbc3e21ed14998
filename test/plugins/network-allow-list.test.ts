import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PluginLoadError, parseManifest } from '../../main/plugins/index.js';
import { parseAllowEntry } from '../../main/plugins/network/allow-entry.js';

const base = '[module]\nname = "m"\nversion = "1.0.0"\nwasm = "plugin.wasm"\n';

function refusal(allow: string): string {
  try {
    parseManifest(`${base}[network]\nallow = ${allow}\n`);
  } catch (err) {
    assert.ok(err instanceof PluginLoadError);
    return err.message;
  }
  assert.fail(`${allow} was accepted`);
}

describe('[network] allow in module.toml', () => {
  it('reads names, wildcards and IP literals with optional ports; no [network] is no network', () => {
    const allow = ['api.example.com', '*.example.org:443', '127.0.0.1:8080', '[::1]:80'];
    assert.deepEqual(parseManifest(`${base}[network]\nallow = ${JSON.stringify(allow)}\n`).manifest.network, { allow });
    assert.equal(parseManifest(base).manifest.network, undefined);
  });

  it('refuses a bad entry at load, naming it and saying why', () => {
    assert.equal(refusal('["ok.example.com", "https://api.example.com"]'), 'module.toml: [network] allow.1: "https://api.example.com" has a scheme; write only the host and an optional port, e.g. "api.example.com:443"');
    assert.equal(refusal('["api.example.com/v1"]'), 'module.toml: [network] allow.0: "api.example.com/v1" has a path, query or user name; write only the host and an optional port');
    assert.equal(refusal('["api.example.com:0"]'), 'module.toml: [network] allow.0: "api.example.com:0" has a port "0" that is not a number from 1 to 65535');
    assert.equal(refusal('["api.example.com:http"]'), 'module.toml: [network] allow.0: "api.example.com:http" has a port "http" that is not a number from 1 to 65535');
    assert.equal(refusal('["*.com"]'), 'module.toml: [network] allow.0: "*.com" is a wildcard over a whole top-level domain; name at least "*.example.org"');
    assert.equal(refusal('["*"]'), 'module.toml: [network] allow.0: "*" has a "*" that is not a leading "*." (only "*.example.org" is a wildcard)');
    assert.equal(refusal('["api.*.com"]'), 'module.toml: [network] allow.0: "api.*.com" has a "*" that is not a leading "*." (only "*.example.org" is a wildcard)');
    assert.equal(refusal('["127.1"]'), 'module.toml: [network] allow.0: "127.1" ends in a number but is not an IPv4 address of four decimal parts');
    assert.equal(refusal('["::1"]'), 'module.toml: [network] allow.0: "::1" is an IPv6 address: write it in brackets, e.g. "[::1]:8080"');
    assert.equal(refusal('["a b.com"]'), 'module.toml: [network] allow.0: "a b.com" has a space or control character');
    assert.equal(refusal('[""]'), 'module.toml: [network] allow.0: "" is empty');
    assert.equal(refusal('"api.example.com"'), 'module.toml: [network] allow: Invalid input: expected array, received string');
    assert.equal(refusal('[]\nblock = ["x"]'), 'module.toml: [network]: unknown key "block"');
  });

  it('keeps entries in the form a request URL is compared in', () => {
    assert.deepEqual(parseAllowEntry('API.Example.COM'), { text: 'API.Example.COM', kind: 'name', host: 'api.example.com', port: null });
    assert.deepEqual(parseAllowEntry('*.bücher.de:8443'), { text: '*.bücher.de:8443', kind: 'suffix', host: 'xn--bcher-kva.de', port: 8443 });
    assert.deepEqual(parseAllowEntry('[0:0::1]:8080'), { text: '[0:0::1]:8080', kind: 'ip', host: '[::1]', port: 8080 });
    assert.deepEqual(parseAllowEntry('10.0.0.1'), { text: '10.0.0.1', kind: 'ip', host: '10.0.0.1', port: null });
  });
});

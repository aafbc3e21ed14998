import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PluginLoadError, parseManifest } from '../../main/plugins/index.js';
import { parseAllowEntry } from '../../main/plugins/network/allow-entry.js';
import { AllowList } from '../../main/plugins/network/allow-list.js';
import { specialRange } from '../../main/plugins/network/special-address.js';

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
    // A look-alike (Cyrillic "а") would read as api.github.com in the grant ask: the entry is written as it is reached.
    assert.equal(refusal('["аpi.github.com"]'), 'module.toml: [network] allow.0: "аpi.github.com" is not ASCII: write it as it is reached, "xn--pi-6kc.github.com", so the person granting it reads that name and not a look-alike');
    assert.equal(refusal('["*.bücher.de:8443"]'), 'module.toml: [network] allow.0: "*.bücher.de:8443" is not ASCII: write it as it is reached, "*.xn--bcher-kva.de:8443", so the person granting it reads that name and not a look-alike');
    assert.equal(refusal('["api.github.com\\u200b"]'), 'module.toml: [network] allow.0: "api.github.com\u200b" is not ASCII: write it as it is reached, "api.github.com", so the person granting it reads that name and not a look-alike');
    assert.equal(refusal('"api.example.com"'), 'module.toml: [network] allow: Invalid input: expected array, received string');
    assert.equal(refusal('[]\nblock = ["x"]'), 'module.toml: [network]: unknown key "block"');
  });

  it('keeps entries in the form a request URL is compared in', () => {
    assert.deepEqual(parseAllowEntry('API.Example.COM'), { text: 'API.Example.COM', kind: 'name', host: 'api.example.com', port: null });
    assert.deepEqual(parseAllowEntry('*.XN--bcher-kva.de:8443'), { text: '*.XN--bcher-kva.de:8443', kind: 'suffix', host: 'xn--bcher-kva.de', port: 8443 });
    assert.deepEqual(parseAllowEntry('[0:0::1]:8080'), { text: '[0:0::1]:8080', kind: 'ip', host: '[::1]', port: 8080 });
    assert.deepEqual(parseAllowEntry('10.0.0.1'), { text: '10.0.0.1', kind: 'ip', host: '10.0.0.1', port: null });
  });
});

describe('AllowList.match: which host and port a request may name', () => {
  const list = new AllowList(['api.example.com', '*.example.org:8443', '127.0.0.1:8080', '[::1]']);
  const host = (h: string, port: number) => list.match(h, port)?.text;

  it('a name exactly, on 80 and 443 when the entry gives no port', () => {
    assert.equal(host('api.example.com', 443), 'api.example.com');
    assert.equal(host('api.example.com', 80), 'api.example.com');
    assert.equal(host('api.example.com', 8080), undefined);
    assert.equal(host('www.api.example.com', 443), undefined);
    assert.equal(host('api.example.com.evil.net', 443), undefined);
  });

  it('a wildcard: names below it, on its port, not the name itself', () => {
    assert.equal(host('a.example.org', 8443), '*.example.org:8443');
    assert.equal(host('a.b.example.org', 8443), '*.example.org:8443');
    assert.equal(host('example.org', 8443), undefined);
    assert.equal(host('a.example.org', 443), undefined);
    assert.equal(host('badexample.org', 8443), undefined);
  });

  it('IP literals as URL.hostname writes them', () => {
    assert.equal(host('127.0.0.1', 8080), '127.0.0.1:8080');
    assert.equal(host('127.0.0.1', 80), undefined);
    assert.equal(host('[::1]', 443), '[::1]');
    assert.equal(host('[::ffff:7f00:1]', 8080), undefined);
  });
});

describe('specialRange: addresses a name reaches only when the list names the address', () => {
  it('an IPv4 address behind NAT64 (64:ff9b::/96, as DNS64 writes an A record) is that address; the local-use NAT64 prefix is private', () => {
    const ranges = Object.fromEntries(['64:ff9b::a00:5', '64:ff9b::7f00:1', '64:ff9b::169.254.169.254', '64:ff9b::808:808', '64:ff9b:1::a00:5'].map((a) => [a, specialRange(a)]));
    assert.deepEqual(ranges, {
      '64:ff9b::a00:5': 'private', '64:ff9b::7f00:1': 'loopback', '64:ff9b::169.254.169.254': 'link-local', '64:ff9b::808:808': null,
      '64:ff9b:1::a00:5': 'private (local-use NAT64)',
    });
  });

  it('names loopback, private, link-local, unspecified and multicast ranges, IPv4-mapped included; public is null', () => {
    const ranges = Object.fromEntries(
      ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.1', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:a01:203', '8.8.8.8', '2001:4860:4860::8888', '172.32.0.1'].map((a) => [a, specialRange(a)]),
    );
    assert.deepEqual(ranges, {
      '127.0.0.1': 'loopback', '10.1.2.3': 'private', '172.16.0.1': 'private', '192.168.1.1': 'private', '100.64.0.1': 'private (shared address space)',
      '169.254.169.254': 'link-local', '0.0.0.0': 'unspecified', '224.0.0.1': 'multicast', '::1': 'loopback', '::': 'unspecified',
      'fd00::1': 'private (unique local)', 'fe80::1': 'link-local', '::ffff:127.0.0.1': 'loopback', '::ffff:a01:203': 'private',
      '8.8.8.8': null, '2001:4860:4860::8888': null, '172.32.0.1': null,
    });
  });
});

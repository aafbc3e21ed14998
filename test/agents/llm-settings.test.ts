/** The LLM agent's pure parts: its settings, where it looks for the gateway, plugin tool names. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { GatewayLocationError, LlmConfigError, locateGateway, readLlmConfig } from '../../main/agents/llm/index.js';
import { FUNCTION_NAME, pluginToolName } from '../../main/agents/llm/tool-names.js';

const BASE = { CHATTY_LLM_BASE_URL: 'http://127.0.0.1:8080/v1', CHATTY_LLM_MODEL: 'm', CHATTY_LLM_API_KEY: 'k' };

describe('readLlmConfig', () => {
  test('the three required variables, and the defaults', () => {
    assert.deepEqual(readLlmConfig(BASE), {
      baseUrl: 'http://127.0.0.1:8080/v1',
      model: 'm',
      apiKey: 'k',
      maxTurns: 16,
      maxRetries: 2,
      timeoutMs: 120_000,
      execTimeoutMs: 600_000,
    });
    assert.equal(readLlmConfig({ ...BASE, CHATTY_LLM_MAX_TURNS: '3', CHATTY_LLM_MAX_RETRIES: '0' }).maxTurns, 3);
  });

  test('every variable at fault is named, in one message', () => {
    assert.throws(() => readLlmConfig({}), {
      name: 'LlmConfigError',
      message: 'the LLM agent is not configured: CHATTY_LLM_BASE_URL is not set; CHATTY_LLM_MODEL is not set; CHATTY_LLM_API_KEY is not set',
    });
    assert.throws(() => readLlmConfig({ ...BASE, CHATTY_LLM_BASE_URL: 'ftp://x', CHATTY_LLM_MODEL: ' ', CHATTY_LLM_MAX_TURNS: '0' }), {
      message:
        'the LLM agent is not configured: CHATTY_LLM_BASE_URL must be an http:// or https:// URL; CHATTY_LLM_MODEL is empty; CHATTY_LLM_MAX_TURNS must be at least 1',
    });
    assert.throws(() => readLlmConfig({ ...BASE, CHATTY_LLM_TIMEOUT_MS: '1.5s' }), LlmConfigError);
  });
});

describe('locateGateway', () => {
  test('the socket and token file named by the environment; a runtime directory; both or neither', () => {
    assert.deepEqual(locateGateway({ CHATTY_GATEWAY_SOCKET: '/r/gateway.sock', CHATTY_GATEWAY_TOKEN_FILE: '/r/gateway.token' }), {
      socketPath: '/r/gateway.sock',
      tokenPath: '/r/gateway.token',
      explicit: true,
    });
    assert.deepEqual(locateGateway({ CHATTY_GATEWAY_RUNTIME_DIR: '/run/x' }), { socketPath: '/run/x/gateway.sock', tokenPath: '/run/x/gateway.token', explicit: true });
    assert.throws(() => locateGateway({ CHATTY_GATEWAY_SOCKET: '/r/gateway.sock' }), {
      name: 'GatewayLocationError',
      message: 'CHATTY_GATEWAY_SOCKET is set but CHATTY_GATEWAY_TOKEN_FILE is not: set both, or neither',
    });
    assert.throws(() => locateGateway({ CHATTY_GATEWAY_RUNTIME_DIR: 'run' }), GatewayLocationError);
  });

  test('without those, the default runtime directory only when a socket is there', () => {
    const xdg = mkdtempSync(join(tmpdir(), 'chatty-llm-xdg-'));
    try {
      assert.equal(locateGateway({ XDG_RUNTIME_DIR: xdg }), undefined);
      const dir = join(xdg, 'chatty-run');
      mkdirSync(dir, { mode: 0o700 });
      assert.equal(locateGateway({ XDG_RUNTIME_DIR: xdg }), undefined);
      writeFileSync(join(dir, 'gateway.sock'), '');
      assert.deepEqual(locateGateway({ XDG_RUNTIME_DIR: xdg }), { socketPath: join(dir, 'gateway.sock'), tokenPath: join(dir, 'gateway.token'), explicit: false });
    } finally {
      rmSync(xdg, { recursive: true, force: true });
    }
  });
});

describe('pluginToolName', () => {
  test('<module>__<tool>, other characters made _', () => {
    assert.equal(pluginToolName('echo', 'echo', new Set()), 'echo__echo');
    assert.equal(pluginToolName('my.plugin', 'read file/v2', new Set()), 'my_plugin__read_file_v2');
  });

  test('too long or taken: cut, with a hash of the original', () => {
    const long = pluginToolName('m'.repeat(40), 't'.repeat(40), new Set());
    assert.equal(long.length, 64);
    assert.match(long, FUNCTION_NAME);
    assert.match(long, /^m{40}__t{13}_[0-9a-f]{8}$/);
    const taken = new Set(['a_b__c']);
    const second = pluginToolName('a.b', 'c', taken);
    assert.match(second, /^a_b__c_[0-9a-f]{8}$/);
    assert.notEqual(pluginToolName('a_b', 'c', new Set([...taken, second])), second);
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as api from '../main/index.js';

test('the library entry exports the contracts the issues name', () => {
  for (const name of [
    'ProtocolGateway',
    'ModuleRegistry',
    'ModuleHandle',
    'PluginCallError',
    'FrameCodec',
    'Directory',
    'ParticipantRegistry',
    'openConnection',
    'serveConnection',
    'withParticipantSocket',
    'openModules',
    'MAX_REQUEST_BYTES',
  ]) {
    assert.ok(name in api, `main/index.ts exports ${name}`);
  }
  const gateway = new api.ProtocolGateway({ list: () => [] });
  for (const method of ['withRuntimeDir', 'start', 'token', 'stop', 'buildRouter'] as const) {
    assert.equal(typeof gateway[method], 'function', `ProtocolGateway#${method}`);
  }
  assert.match(gateway.token(), /^[0-9a-f]{64}$/);
});

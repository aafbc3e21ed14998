import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { WIRE_SCHEMA_DOC, renderWireSchema } from '../../scripts/wire-schema.js';

test('docs/wire-v3.schema.json is the JSON Schema generated from the wire schemas (npm run wire-schema)', () => {
  assert.equal(readFileSync(WIRE_SCHEMA_DOC, 'utf8'), renderWireSchema());
});

// Writes docs/wire-v3.schema.json: the participant wire (v3) as JSON Schema, generated from the
// zod schemas in main/fabric/wire (the one source). `npm run wire-schema`; a test keeps it current.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { wireJsonSchema } from '../main/fabric/index.js';

export const WIRE_SCHEMA_DOC = fileURLToPath(new URL('../docs/wire-v3.schema.json', import.meta.url));

export function renderWireSchema(): string {
  return `${JSON.stringify(wireJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(WIRE_SCHEMA_DOC, renderWireSchema());
  process.stdout.write(`wrote ${WIRE_SCHEMA_DOC}\n`);
}

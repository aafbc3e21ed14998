/**
 * Scans one outcome frame whose opaque `conversation` nests argv[3] (default `{"a":`) argv[2]
 * levels deep, and prints `ok` or why not; run under a small heap (--max-old-space-size) by
 * deep-opaque.test.ts.
 */
import { scanJson } from '../../../main/fabric/codec/json-scan.js';

const depth = Number(process.argv[2]);
const unit = process.argv[3] ?? '{"a":';
const line = `{"v":3,"id":1,"result":{"state":"completed","metadata":{"conversation":${unit.repeat(depth)}0${'}'.repeat(depth)}}}}`;
const scanned = scanJson(line, new Set(['conversation']));
process.stdout.write(scanned.ok ? 'ok\n' : `${scanned.reason}\n`);

/**
 * The key count's two readers: the codec's (stops at a `metadata` key or a key written with an
 * escape: only the full scan reads those) and `nestsTooDeep`'s (reads on, for the depth alone:
 * MCP and A2A bodies, mcp-stdio lines). Both must count levels as JSON.parse builds them, an empty
 * `[]` or `{}` opening none, brackets in strings never. Generated texts near the cap, seeded.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HAS_METADATA, TOO_DEEP, countParsedKeys, countTextKeys, nestsTooDeep } from '../../main/fabric/codec/key-count.js';
import { decodeFrameText } from '../../main/fabric/codec/frame-text.js';
import { FROM_WORKER } from '../../main/fabric/wire/direction.js';
import { MAX_NESTING_DEPTH } from '../../main/fabric/wire/sizes.js';

/** Levels as the cap counts them, of what JSON.parse built: a non-empty array or object opens one. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const items = Array.isArray(value) ? value : Object.values(value);
  let deepest = 0;
  for (const item of items) deepest = Math.max(deepest, depthOf(item));
  return items.length === 0 ? 0 : 1 + deepest;
}

function texts(seed: number, count: number, lowest: number, highest: number): string[] {
  let state = seed;
  const random = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const ws = (): string => pick(['', '', ' ', '\n', '\t', '\r', ' \n\t ']);
  const pieces = ['[', '{', ']', '}', '\\"', '\\\\', '\\u0022', '\\u005b', '\\ud800', '\ud83d\ude00', ':', ',', '\u2028', '\ufeff', '\u00a0', 'a'];
  const string = (): string => `"${Array.from({ length: Math.floor(random() * 4) }, () => pick(pieces)).join('')}"`;
  const scalar = (): string => pick([string(), '1e999', '-0', 'true', 'null', '0.5E+3']);
  const firstKeys = ['"__proto__"', '"constructor"', '"metadata"', '"a"', '"\\u0061"', '"x\\"[{"'];
  // A value nesting exactly `levels`, its deepest branch among shallow siblings; keys unique within an object.
  const value = (levels: number): string => {
    if (levels === 0) return random() < 0.3 ? pick(['[]', '{}', `[${ws()}]`, `{${ws()}}`]) : scalar();
    const kids = Array.from({ length: 1 + Math.floor(random() * 2) }, () => scalar());
    kids[Math.floor(random() * kids.length)] = value(levels - 1);
    const sep = `${ws()},${ws()}`;
    if (random() < 0.5) return `[${ws()}${kids.join(sep)}${ws()}]`;
    return `{${ws()}${kids.map((kid, at) => `${at === 0 ? pick(firstKeys) : `"k${at}${string().slice(1)}`}${ws()}:${ws()}${kid}`).join(sep)}${ws()}}`;
  };
  return Array.from({ length: count }, () => value(lowest + Math.floor(random() * (highest - lowest + 1))));
}

describe('the key count', () => {
  test('read on past metadata and escaped keys, it counts every key and level; the codec stops there', () => {
    const line = `{"a":1,"metadata":{"\\u0062":[1,{"c":2}]},"d":${'['.repeat(400)}${']'.repeat(400)},"\\"e":3}`;
    assert.equal(countTextKeys(line), HAS_METADATA);
    assert.equal(countTextKeys(line, false), countParsedKeys(JSON.parse(line)));
    assert.equal(countTextKeys(line, false), 6);
    const escapedFirst = `{"\\u0061":1,"m":${'['.repeat(MAX_NESTING_DEPTH + 1)}${']'.repeat(MAX_NESTING_DEPTH + 1)}}`;
    assert.equal(countTextKeys(escapedFirst), HAS_METADATA);
    assert.equal(countTextKeys(escapedFirst, false), TOO_DEEP);
    // A backslash in a value, not a key, sends nothing to the scan, in either reader.
    assert.equal(countTextKeys('{"a":"\\n","metadatb":1}'), 2);
    assert.equal(countTextKeys('{"a":"\\n","metadatb":1}', false), 2);
  });

  test('both wires refuse exactly the texts nesting past the cap, as JSON.parse builds them', () => {
    let checked = 0;
    for (const text of texts(20261204, 300, MAX_NESTING_DEPTH - 4, MAX_NESTING_DEPTH + 4)) {
      const depth = depthOf(JSON.parse(text));
      assert.equal(nestsTooDeep(text), depth > MAX_NESTING_DEPTH, `depth ${depth}: ${text.slice(0, 120)}`);
      // The same value one level down in a worker's frame: the codec's count or, past a metadata or escaped key, its scan.
      const decoded = decodeFrameText(`{"v":3,"method":"task.event","params":{"kind":"artifact","id":1,"text":"x"},"x":${text}}`, FROM_WORKER, () => undefined);
      const refused = decoded.type === 'invalid' && /nesting deeper than/.test(decoded.reason);
      assert.equal(refused, depth + 1 > MAX_NESTING_DEPTH, `frame depth ${depth + 1}: ${decoded.type === 'invalid' ? decoded.reason : decoded.type}`);
      checked++;
    }
    assert.equal(checked, 300);
  });
});

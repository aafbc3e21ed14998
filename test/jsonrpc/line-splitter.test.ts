import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidUtf8Error, LineSplitter, LineTooLongError } from '../../main/jsonrpc/index.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('LineSplitter', () => {
  test('joins lines across chunks and keeps a final line without newline', () => {
    const splitter = new LineSplitter(100);
    assert.deepEqual(splitter.push(bytes('{"a":')), []);
    assert.deepEqual(splitter.push(bytes('1}\n{"b":2}\n{"c"')), ['{"a":1}', '{"b":2}']);
    assert.deepEqual(splitter.push(bytes(':3}')), []);
    assert.deepEqual(splitter.end(), ['{"c":3}']);
  });

  test('skips blank lines', () => {
    assert.deepEqual(new LineSplitter(100).push(bytes('\n  \r\n1\n\n')), ['1']);
  });

  test('decodes a multi-byte character split between chunks', () => {
    const splitter = new LineSplitter(100);
    const all = bytes('"héllo €"\n');
    assert.deepEqual(splitter.push(all.subarray(0, 3)), []);
    assert.deepEqual(splitter.push(all.subarray(3, 10)), []);
    assert.deepEqual(splitter.push(all.subarray(10)), ['"héllo €"']);
  });

  test('caps a line in bytes, newline excluded, before the newline arrives', () => {
    const splitter = new LineSplitter(4);
    assert.deepEqual(splitter.push(bytes('1234\n')), ['1234']);
    assert.throws(() => splitter.push(bytes('12345')), LineTooLongError);
    assert.throws(() => new LineSplitter(4).push(bytes('"é€"')), LineTooLongError); // 4 characters, 7 bytes
  });

  test('refuses bytes that are not UTF-8', () => {
    assert.throws(() => new LineSplitter(100).push(new Uint8Array([0x22, 0xff, 0x22, 0x0a])), InvalidUtf8Error);
  });
});

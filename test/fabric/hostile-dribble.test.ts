/**
 * A worker that writes a line a byte at a time, each byte read by the broker alone, and never ends
 * it: what the broker holds for that unfinished line is about its bytes, not a buffer (and its
 * hundreds of bytes of bookkeeping) per read. A real child (children/dribble.ts) on a real
 * socketpair; the heap and array buffers measured after a full garbage collection.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { openConnection } from '../../main/fabric/index.js';
import { LineSplitter } from '../../main/fabric/codec/line-splitter.js';
import { heldAfterGc } from './held-after-gc.js';
import { childArgs, newFabric } from './helpers.js';

test('a line written one byte per read costs the broker about its bytes, not a buffer per read', async () => {
  const round = 4_000; // a buffer kept per read would be ~760 KB of them: well past the bound below
  let reads = 0;
  // Paced: each byte waits for the test's word that a read took the one before (a loaded CI machine
  // let the child write on unscheduled, and the broker read 2,635 times for 20,000 bytes).
  // The first round is as long as the measured one: V8 optimizes the read path's functions within
  // the first few thousand reads, ~90 KB of code and feedback that would else land inside the
  // measure (325 KB on a loaded CI machine, where the compiler thread lags; ~8 KB once warm).
  const opened = await openConnection('dribble', process.execPath, childArgs('dribble.ts', String(round), 'paced', String(round)), {
    ...newFabric(),
    log: () => {},
    onSpawn: (child) =>
      child.stdio[3]!.on('data', () => {
        reads++;
        child.stdin!.write('k');
      }),
  });
  try {
    const reports = createInterface({ input: opened.child.stdout! })[Symbol.asyncIterator]();
    await reports.next(); // the first round: every structure of the connection is made, and its code optimized, by now
    const before = heldAfterGc();
    const readsBefore = reads;
    opened.child.stdin!.write('\n');
    await reports.next();
    const grown = heldAfterGc() - before;
    const perRead = (reads - readsBefore) / round;
    // Each read a buffer of its own kept as a piece of the line: ~190 bytes per byte read alone
    // (760 KB here). Copied into owned buffers: the bytes and a 16 KiB buffer's rounding.
    assert.ok(perRead > 0.15, `the broker read ${(round * perRead).toFixed(0)} times for ${round} bytes: too few reads for this test to tell`);
    assert.ok(grown < 256 * 1024, `the unfinished line grew the broker by ${grown} bytes for ${round} bytes in ${reads - readsBefore} reads`);
    assert.equal(opened.connection.isOpen, true);
  } finally {
    opened.connection.close('the test is over');
    opened.child.stdin!.end();
    await once(opened.child, 'exit');
  }
});

test('the splitter gives back a line cut into pieces of every size as it was written', () => {
  // Small pieces are copied into owned buffers, large ones kept as they are: the line's bytes, in order.
  const line = Buffer.from(Array.from({ length: 40_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''));
  const sizes = [1, 4095, 4096, 1, 1, 9000, 3, 16_384, 2, 5000];
  for (const rotate of [0, 3, 7]) {
    const splitter = new LineSplitter(1 << 20);
    const blocks: Buffer[] = [];
    let at = 0;
    for (let k = 0; at < line.length; k++) {
      const size = Math.min(sizes[(k + rotate) % sizes.length]!, line.length - at);
      blocks.push(...splitter.push(line.subarray(at, at + size)).blocks);
      at += size;
    }
    assert.equal(splitter.buffered, line.length);
    blocks.push(...splitter.push(Buffer.from('\nnext')).blocks);
    assert.equal(Buffer.concat(blocks).toString(), `${line.toString()}\n`);
    assert.equal(splitter.buffered, 4);
  }
});

test("a worker's stderr written one byte per read: the tail the broker keeps costs about its 8 KiB", async () => {
  const round = 20_000;
  const opened = await openConnection('dribble', process.execPath, childArgs('dribble.ts', String(round), 'stderr', '1'), { ...newFabric(), log: () => {} });
  try {
    const reports = createInterface({ input: opened.child.stdout! })[Symbol.asyncIterator]();
    await reports.next(); // one byte: every structure of the connection is made by now
    const before = heldAfterGc();
    opened.child.stdin!.write('\n');
    await reports.next();
    // The report comes on stdout, another pipe: the last stderr bytes may still be on their way.
    for (const deadline = performance.now() + 20_000; opened.stderrTail().length < 8 * 1024 && performance.now() < deadline; ) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const grown = heldAfterGc() - before;
    assert.equal(opened.stderrTail().length, 8 * 1024);
    // A buffer kept per read: some 130 bytes a byte for the 8 KiB kept (about 1 MB).
    assert.ok(grown < 256 * 1024, `the broker grew by ${grown} bytes with the tail of ${round} bytes of stderr`);
  } finally {
    opened.connection.close('the test is over');
    opened.child.stdin!.end();
    await once(opened.child, 'exit');
  }
});

test('an unfinished line cut into pieces around 4 KiB, or small ones between pooled allocations: it costs at most ~15% over its bytes', () => {
  // Each chunk a buffer of its own, as a socket read's is.
  const chunk = (n: number): Buffer => Buffer.allocUnsafeSlow(n).fill(0x78);
  const costs: string[] = [];
  const patterns: [string, number[], (() => void) | undefined][] = [
    ['2048 x4, 4096', [2048, 2048, 2048, 2048, 4096], undefined],
    ['2048 x4 + 1, 4096', [2048, 2048, 2048, 2049, 4096], undefined],
    // Pooled allocations between reads (the broker makes them: `Buffer.from` of a task's text).
    ['1, 4096, 8 KiB pooled between', [1, 4096], () => {
      for (let i = 0; i < 80; i++) pooled.push(Buffer.from('y'.repeat(100)));
      pooled.length = 0;
    }],
  ];
  const pooled: Buffer[] = [];
  for (const [name, sizes, between] of patterns) {
    const splitter = new LineSplitter(64 * 1024 * 1024);
    splitter.push(Buffer.from('{"v":3,"method":"task.event","params":{"id":1,"kind":"artifact","text":"'));
    const before = heldAfterGc();
    let sent = 0;
    for (let k = 0; sent < 16 * 1024 * 1024; k++) {
      const n = sizes[k % sizes.length]!;
      splitter.push(chunk(n));
      sent += n;
      between?.();
    }
    const perByte = (heldAfterGc() - before) / sent;
    assert.equal(splitter.buffered > sent, true); // still held, so still measured
    costs.push(`${name}: ${perByte.toFixed(2)} bytes/byte`);
    assert.ok(perByte < 1.15, costs.join('; '));
  }
});

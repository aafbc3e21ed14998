import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readBelowRoot, type ReadResult } from '../../main/plugins/worker/file-access.js';

const text = (r: ReadResult): string => {
  assert.equal(r.tag, 'ok', r.tag === 'err' ? r.val : '');
  return new TextDecoder().decode(r.val as Uint8Array);
};
const refused = (r: ReadResult, why: RegExp): void => {
  assert.equal(r.tag, 'err', 'the read was allowed');
  assert.match(r.val as string, why);
};

describe('file.read-bytes: decided on the opened descriptor (unit)', () => {
  let base: string;
  let root: string;
  let outside: string;

  before(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-file-')));
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(join(root, 'sub'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'f.txt'), 'SECRET');
    writeFileSync(join(outside, 'secret.txt'), 'SECRET');
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  /** A fresh `sub/f.txt` inside the root. */
  const reset = (): void => {
    rmSync(join(root, 'sub'), { recursive: true, force: true });
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'f.txt'), 'inside');
  };

  it('reads a file below the root and enforces the size limit on the descriptor', () => {
    reset();
    assert.equal(text(readBelowRoot(root, 'sub/f.txt', 6)), 'inside');
    refused(readBelowRoot(root, 'sub/f.txt', 5), /6 bytes is over the 5-byte limit/);
  });

  for (const noProcFd of [false, true]) {
    const how = noProcFd ? 'portable check' : '/proc/self/fd';
    it(`refuses a final component swapped for a symlink out of the root between resolve and open (${how})`, () => {
      reset();
      const r = readBelowRoot(root, 'sub/f.txt', 1024, {
        noProcFd,
        beforeOpen(resolved) {
          unlinkSync(resolved);
          symlinkSync(join(outside, 'secret.txt'), resolved);
        },
      });
      refused(r, /became a symlink/);
    });

    it(`refuses a directory swapped for a symlink out of the root between resolve and open (${how})`, () => {
      reset();
      const r = readBelowRoot(root, 'sub/f.txt', 1024, {
        noProcFd,
        beforeOpen() {
          renameSync(join(root, 'sub'), join(base, `moved-${noProcFd}`));
          symlinkSync(outside, join(root, 'sub'));
        },
      });
      refused(r, /real path leaves the \[files\] root/);
      unlinkSync(join(root, 'sub'));
    });
  }

  it('refuses a FIFO swapped in between resolve and open, without blocking', () => {
    reset();
    const r = readBelowRoot(root, 'sub/f.txt', 1024, {
      beforeOpen(resolved) {
        unlinkSync(resolved);
        execFileSync('mkfifo', [resolved]);
      },
    });
    refused(r, /not a regular file/);
  });

  it('refuses a directory swapped in for the file', () => {
    reset();
    const r = readBelowRoot(root, 'sub/f.txt', 1024, {
      beforeOpen(resolved) {
        unlinkSync(resolved);
        mkdirSync(resolved);
      },
    });
    refused(r, /not a regular file|cannot read/);
  });

  it('pins the root: a root later replaced by a symlink does not move it', () => {
    reset();
    const pinned = join(base, 'pinned');
    mkdirSync(pinned);
    writeFileSync(join(pinned, 'f.txt'), 'pinned');
    assert.equal(text(readBelowRoot(pinned, 'f.txt', 1024)), 'pinned');
    renameSync(pinned, join(base, 'pinned-old'));
    symlinkSync(outside, pinned);
    refused(readBelowRoot(pinned, 'f.txt', 1024), /real path leaves the \[files\] root/);
  });
});

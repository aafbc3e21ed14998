/**
 * OwnerOnlyJsonFile checked two folders: the one the path names and the one of the file realpath()
 * leads to. A link on the way between them (path -> shared/mid -> real file) lives in a folder
 * others may write and was never looked at: whoever can write that folder re-points `mid` at any
 * other file of the owner's (an older grants file, another profile's rules), read as the grants
 * file, judged owner-only. Likewise a folder further up (/shared/sub/file.json, `sub` renamed away
 * and replaced). Now every folder the path passes through is judged: each link's own folder and
 * every folder above each step.
 *
 * Each folder was judged as its owner's, and links not at all: a folder another user owns (0755:
 * only they may write it) on the way, or a link they own in a sticky folder (/tmp: they may
 * replace it), passed, though that user could re-point what comes next at any JSON file of the
 * owner's. Now each folder must be the owner's or root's, and so must each link followed.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { OwnerOnlyJsonFile } from '../../main/owner-only/index.js';

const Shape = z.object({ n: z.number() });
const open = (path: string) =>
  new OwnerOnlyJsonFile(path, { label: 'test file', contents: 'numbers', kind: 'a test file', schema: Shape, refuse: (m) => new Error(m) });

function outcome(path: string): string {
  try {
    return `read ${JSON.stringify(open(path).read())}`;
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
}

function withFolders(body: (at: { own: string; shared: string; elsewhere: string; real: string }) => void): void {
  const root = mkdtempSync(join(tmpdir(), 'json-link-chain-'));
  try {
    const own = join(root, 'own');
    const shared = join(root, 'shared');
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(own, { mode: 0o700 });
    mkdirSync(shared);
    chmodSync(shared, 0o777); // others may write, no sticky bit: anyone can rename or re-point what is in it
    mkdirSync(elsewhere, { mode: 0o700 });
    const real = join(elsewhere, 'real.json');
    writeFileSync(real, '{"n":1}', { mode: 0o600 });
    body({ own, shared, elsewhere, real });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

test('a link in a folder others may write, on the way from the path to the file, is refused like the others', () => {
  withFolders(({ own, shared, real }) => {
    symlinkSync(real, join(shared, 'mid'));
    symlinkSync(join(shared, 'mid'), join(own, 'file.json'));
    // The same file through a link whose own folder is the shared one: refused (control).
    symlinkSync(real, join(shared, 'direct.json'));
    assert.match(outcome(join(shared, 'direct.json')), /^refused: .*folder others may write/);
    assert.match(outcome(join(own, 'file.json')), new RegExp(`^refused: .*is in a folder others may write \\(${shared}\\)`), 'the link in the shared folder was followed unjudged');
    // A relative link in the middle, too.
    symlinkSync('../shared/mid', join(own, 'relative.json'));
    assert.match(outcome(join(own, 'relative.json')), /^refused: .*folder others may write/);
  });
});

test('a folder others may write above the file (not its own folder) is refused; a chain of closed folders is read', () => {
  withFolders(({ own, shared, elsewhere, real }) => {
    const sub = join(shared, 'sub');
    mkdirSync(sub, { mode: 0o700 });
    writeFileSync(join(sub, 'file.json'), '{"n":2}', { mode: 0o600 });
    assert.match(outcome(join(sub, 'file.json')), new RegExp(`^refused: .*is in a folder others may write \\(${shared}\\)`));
    // A folder of links, every one in a closed folder: read.
    symlinkSync(elsewhere, join(own, 'to-elsewhere'));
    symlinkSync(join(own, 'to-elsewhere', 'real.json'), join(own, 'file.json'));
    assert.equal(outcome(join(own, 'file.json')), 'read {"n":1}');
    assert.equal(outcome(real), 'read {"n":1}');
  });
});

/** Another user, for the tests that can make something theirs (as root). */
const OTHER = 4321;
const asRoot = { skip: process.getuid?.() !== 0 ? 'needs root to make a folder or link another user\'s' : false };

test("a folder another user owns on the way to the file is refused: they may re-point what is in it", asRoot, () => {
  withFolders(({ own, elsewhere, real }) => {
    const theirs = join(elsewhere, '..', 'theirs');
    mkdirSync(theirs, { mode: 0o755 });
    chownSync(theirs, OTHER, OTHER);
    symlinkSync(real, join(theirs, 'mid'));
    symlinkSync(join(theirs, 'mid'), join(own, 'file.json'));
    assert.match(outcome(join(own, 'file.json')), /^refused: .*is in a folder others may write \(.*theirs\)/);
  });
});

test("a link another user owns in a sticky folder on the way is refused: they may replace it", asRoot, () => {
  withFolders(({ own, shared, real }) => {
    chmodSync(shared, 0o1777); // sticky: only a link's owner may replace it
    symlinkSync(real, join(shared, 'mid'));
    lchownSync(join(shared, 'mid'), OTHER, OTHER);
    symlinkSync(join(shared, 'mid'), join(own, 'file.json'));
    assert.match(outcome(join(own, 'file.json')), /^refused: .*is reached through a link another user could replace \(.*mid is owned by another user \(uid 4321\)\)/);
    // The same link, ours: read (a sticky folder keeps it ours).
    lchownSync(join(shared, 'mid'), process.getuid!(), process.getgid!());
    assert.equal(outcome(join(own, 'file.json')), 'read {"n":1}');
  });
});

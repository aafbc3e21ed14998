/**
 * The spawn context rules (docs/broker.md "Spawn context"): derivation, every
 * refusal (via `..` and via symlinks, on real directories), and what an accepted context becomes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  calleeSpawnContext,
  checkSpawnContext,
  deriveSpawnContext,
  type AgentSettings,
} from '../../main/broker/spawn-context.js';
import { CallError } from '../../main/fabric/admission/index.js';
import type { SpawnContext } from '../../main/fabric/wire/payloads.js';
import { WireError } from '../../main/fabric/wire/wire-error.js';

/*
 * base/            (realpath'd: os.tmpdir() may itself be a symlink, as /var is on macOS)
 *   tree/          the caller's workspace
 *     sub/deeper/
 *     file.txt
 *     link-in   -> sub              (inside, pointing inside)
 *     link-out  -> ../outside       (inside, pointing out)
 *     link-up   -> ..               (inside, pointing at the parent)
 *     link-abs  -> /                (inside, absolute, pointing at the file system's root)
 *     loop      -> loop
 *     dangling  -> missing
 *   tree-evil/     a sibling whose name has the caller's root as a prefix
 *   outside/x/
 *   tree-link -> tree               (the caller's root reached through a symlink)
 */
let base = '';
let tree = '';
const TARGET: AgentSettings = { verification: 'npm test', endpoint: 'http://127.0.0.1:7000' };
let caller: SpawnContext;

before(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'spawn-context-')));
  tree = join(base, 'tree');
  mkdirSync(join(tree, 'sub', 'deeper'), { recursive: true });
  mkdirSync(join(base, 'tree-evil'));
  mkdirSync(join(base, 'outside', 'x'), { recursive: true });
  writeFileSync(join(tree, 'file.txt'), 'not a directory\n');
  symlinkSync('sub', join(tree, 'link-in'));
  symlinkSync('../outside', join(tree, 'link-out'));
  symlinkSync('..', join(tree, 'link-up'));
  symlinkSync('/', join(tree, 'link-abs'));
  symlinkSync('loop', join(tree, 'loop'));
  symlinkSync('missing', join(tree, 'dangling'));
  symlinkSync('tree', join(base, 'tree-link'));
  caller = { workspace_root: tree, base_branch: 'dev', roster: ['lead', 'helper', 'tester'], verification: 'caller-only', endpoint: 'caller-only' };
});
after(() => rmSync(base, { recursive: true, force: true }));

/** The context the target would get by derivation, with some fields replaced. */
function requested(fields: Partial<SpawnContext> = {}): SpawnContext {
  return { ...deriveSpawnContext(caller, TARGET), ...fields };
}

/** Asserts that the check refuses with exactly this field and reason, as a valid wire error. */
async function refused(promise: Promise<SpawnContext>, field: string, reason: string | RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CallError, `not a CallError: ${String(err)}`);
    const error = WireError.parse(err.error);
    assert.equal(error.kind, 'spawn_context_refused');
    if (error.kind !== 'spawn_context_refused') return false;
    assert.equal(error.field, field);
    if (typeof reason === 'string') assert.equal(error.reason, reason);
    else assert.match(error.reason, reason);
    assert.equal(error.message, `spawn context refused: ${field}: ${error.reason}`);
    assert.equal(err.message, error.message);
    return true;
  });
}

describe('deriving a context (the call brings none)', () => {
  it("takes the caller's workspace, branch and roster, and the target's verification and endpoint", () => {
    const derived = deriveSpawnContext(caller, TARGET);
    assert.deepEqual(derived, { workspace_root: tree, base_branch: 'dev', roster: ['lead', 'helper', 'tester'], ...TARGET });
    assert.notEqual(derived.roster, caller.roster, 'the roster is a copy, not the caller’s array');
  });

  it('leaves out what neither has', () => {
    assert.deepEqual(deriveSpawnContext({ roster: [] }, {}), { roster: [] });
    const derived = deriveSpawnContext({ roster: ['a'], verification: 'v', endpoint: 'e' }, {});
    assert.deepEqual(derived, { roster: ['a'] }, "the caller's own verification and endpoint never pass on");
    assert.deepEqual(Object.keys(derived), ['roster']);
  });

  it('calleeSpawnContext derives when nothing is requested', async () => {
    assert.deepEqual(await calleeSpawnContext(undefined, caller, TARGET), deriveSpawnContext(caller, TARGET));
  });
});

describe('accepting a requested context', () => {
  it('accepts the derived context itself, unchanged', async () => {
    assert.deepEqual(await checkSpawnContext(requested(), caller, TARGET), requested());
    assert.deepEqual(await calleeSpawnContext(requested(), caller, TARGET), requested());
  });

  it("accepts the caller's root and any directory under it, as its canonical real path", async () => {
    const cases: [string, string][] = [
      [tree, tree],
      [`${tree}/`, tree],
      [`${tree}//sub/./deeper/`, join(tree, 'sub', 'deeper')],
      [join(tree, 'sub'), join(tree, 'sub')],
      [`${tree}/sub/deeper/..`, join(tree, 'sub')],
      [`${tree}/sub/..`, tree],
      [join(tree, 'link-in'), join(tree, 'sub')],
      [`${tree}/link-in/deeper`, join(tree, 'sub', 'deeper')],
      [join(base, 'tree-link', 'sub'), join(tree, 'sub')],
      [`${base}/outside/../tree/sub`, join(tree, 'sub')],
      [`${tree}/link-up/tree/sub`, join(tree, 'sub')],
    ];
    for (const [given, real] of cases) {
      const got = await checkSpawnContext(requested({ workspace_root: given }), caller, TARGET);
      assert.equal(got.workspace_root, real, given);
    }
  });

  it("compares real to real when the caller's root is itself a symlink", async () => {
    const linked = { ...caller, workspace_root: join(base, 'tree-link') };
    assert.equal((await checkSpawnContext(requested({ workspace_root: join(tree, 'sub') }), linked, TARGET)).workspace_root, join(tree, 'sub'));
    assert.equal((await checkSpawnContext(requested({ workspace_root: join(base, 'tree-link') }), linked, TARGET)).workspace_root, tree);
    await refused(
      checkSpawnContext(requested({ workspace_root: join(base, 'tree-evil') }), linked, TARGET),
      'workspace_root',
      `${JSON.stringify(join(base, 'tree-evil'))} is not inside the caller's workspace ${JSON.stringify(join(base, 'tree-link'))} (really ${JSON.stringify(tree)})`,
    );
  });

  it('accepts a narrower roster, an empty one, and repeats of allowed names (kept once: a roster is a set)', async () => {
    for (const roster of [['helper'], [], ['tester', 'lead']]) {
      assert.deepEqual((await checkSpawnContext(requested({ roster }), caller, TARGET)).roster, roster);
    }
    assert.deepEqual((await checkSpawnContext(requested({ roster: ['helper', 'lead', 'helper', 'helper'] }), caller, TARGET)).roster, ['helper', 'lead']);
  });

  it('accepts no workspace and no branch when the caller has none', async () => {
    const bare: SpawnContext = { roster: ['a'] };
    assert.deepEqual(await checkSpawnContext({ roster: [] }, bare, {}), { roster: [] });
    assert.deepEqual(await checkSpawnContext({ roster: ['a'], verification: 'v' }, bare, { verification: 'v' }), { roster: ['a'], verification: 'v' });
  });

  it('returns a context of its own (no array shared with the request)', async () => {
    const ask = requested({ roster: ['helper'] });
    const got = await checkSpawnContext(ask, caller, TARGET);
    assert.notEqual(got.roster, ask.roster);
    assert.notEqual(got.roster, caller.roster);
  });
});

describe('refusing workspace_root', () => {
  const notInside = (given: string, real?: string): string =>
    `${JSON.stringify(given)}${real === undefined ? '' : ` (really ${JSON.stringify(real)})`} is not inside the caller's workspace ${JSON.stringify(tree)}`;
  const check = (workspace_root: string): Promise<SpawnContext> => checkSpawnContext(requested({ workspace_root }), caller, TARGET);

  it('out of the tree through ..', async () => {
    await refused(check(`${tree}/..`), 'workspace_root', notInside(`${tree}/..`, base));
    await refused(check(`${tree}/../outside`), 'workspace_root', notInside(`${tree}/../outside`, join(base, 'outside')));
    await refused(check(`${tree}/sub/../../outside/x`), 'workspace_root', notInside(`${tree}/sub/../../outside/x`, join(base, 'outside', 'x')));
    await refused(check(`${tree}/../../../../../../../../..`), 'workspace_root', notInside(`${tree}/../../../../../../../../..`, '/'));
  });

  it('to a sibling that has the root as a prefix (tree-evil vs tree)', async () => {
    await refused(check(join(base, 'tree-evil')), 'workspace_root', notInside(join(base, 'tree-evil')));
    await refused(check(`${base}/tree-evil/`), 'workspace_root', notInside(`${base}/tree-evil/`, join(base, 'tree-evil')));
    await refused(check(`${tree}/../tree-evil`), 'workspace_root', notInside(`${tree}/../tree-evil`, join(base, 'tree-evil')));
  });

  it('out of the tree through a symlink inside it', async () => {
    await refused(check(join(tree, 'link-out')), 'workspace_root', notInside(join(tree, 'link-out'), join(base, 'outside')));
    await refused(check(join(tree, 'link-out', 'x')), 'workspace_root', notInside(join(tree, 'link-out', 'x'), join(base, 'outside', 'x')));
    await refused(check(join(tree, 'link-up')), 'workspace_root', notInside(join(tree, 'link-up'), base));
    await refused(check(join(tree, 'link-up', 'outside')), 'workspace_root', notInside(join(tree, 'link-up', 'outside'), join(base, 'outside')));
    await refused(check(join(tree, 'link-abs')), 'workspace_root', notInside(join(tree, 'link-abs'), '/'));
    await refused(check(join(tree, 'link-abs', 'tmp')), 'workspace_root', /is not inside the caller's workspace/);
  });

  it('out of the tree through a symlinked parent directory', async () => {
    // tree-link is the tree, but tree-link/.. is base: the kernel resolves the link before the `..`.
    await refused(check(`${base}/tree-link/../outside`), 'workspace_root', notInside(`${base}/tree-link/../outside`, join(base, 'outside')));
    await refused(check(`${tree}/link-in/../../outside`), 'workspace_root', notInside(`${tree}/link-in/../../outside`, join(base, 'outside')));
  });

  it('a path that does not exist, even one that would be inside', async () => {
    await refused(check(join(tree, 'missing')), 'workspace_root', `${JSON.stringify(join(tree, 'missing'))} does not exist`);
    // Not normalized lexically: `missing/..` fails, as the file system sees it.
    await refused(check(`${tree}/missing/../sub`), 'workspace_root', `${JSON.stringify(`${tree}/missing/../sub`)} does not exist`);
    await refused(check(join(tree, 'dangling')), 'workspace_root', `${JSON.stringify(join(tree, 'dangling'))} does not exist`);
    await refused(check(`${tree}/file.txt/..`), 'workspace_root', `${JSON.stringify(`${tree}/file.txt/..`)} does not exist`);
  });

  it('a symlink loop', async () => {
    await refused(check(join(tree, 'loop')), 'workspace_root', `${JSON.stringify(join(tree, 'loop'))} cannot be resolved (ELOOP)`);
  });

  it('a file, not a directory', async () => {
    await refused(check(join(tree, 'file.txt')), 'workspace_root', `${JSON.stringify(join(tree, 'file.txt'))} is not a directory`);
  });

  it('a relative path, an empty one, and one with a NUL byte', async () => {
    for (const given of ['sub', './sub', '../tree/sub', '']) {
      await refused(check(given), 'workspace_root', `${JSON.stringify(given)} is relative: a workspace root must be an absolute path`);
    }
    await refused(check(`${tree}\0/../outside`), 'workspace_root', `${JSON.stringify(`${tree}\0/../outside`)} contains a NUL byte`);
  });

  it('a tree when the caller has none, none when the caller has one', async () => {
    const bare: SpawnContext = { roster: [] };
    await refused(checkSpawnContext({ workspace_root: tree, roster: [] }, bare, {}), 'workspace_root', `${JSON.stringify(tree)} is requested; the caller has no workspace`);
    await refused(checkSpawnContext({ workspace_root: '/', roster: [] }, bare, {}), 'workspace_root', `"/" is requested; the caller has no workspace`);
    await refused(check(undefined as unknown as string), 'workspace_root', `none is requested; the caller's workspace is ${JSON.stringify(tree)}`);
  });

  it("anything, when the caller's own workspace does not exist", async () => {
    const gone = { ...caller, workspace_root: join(base, 'gone') };
    await refused(
      checkSpawnContext(requested({ workspace_root: join(base, 'gone') }), gone, TARGET),
      'workspace_root',
      `the caller's workspace ${JSON.stringify(join(base, 'gone'))} does not exist`,
    );
  });
});

describe('refusing the other fields', () => {
  it('base_branch that differs from the caller’s', async () => {
    await refused(checkSpawnContext(requested({ base_branch: 'main' }), caller, TARGET), 'base_branch', `"main" differs from the caller's "dev"`);
    await refused(checkSpawnContext(requested({ base_branch: undefined }), caller, TARGET), 'base_branch', `none is requested; the caller's is "dev"`);
    await refused(
      checkSpawnContext({ ...requested(), base_branch: 'main' }, { ...caller, base_branch: undefined }, TARGET),
      'base_branch',
      `"main" is requested; the caller has none`,
    );
    await refused(checkSpawnContext(requested({ base_branch: 'dev ' }), caller, TARGET), 'base_branch', `"dev " differs from the caller's "dev"`);
  });

  it('roster names off the caller’s roster, each listed once', async () => {
    await refused(checkSpawnContext(requested({ roster: ['helper', 'root'] }), caller, TARGET), 'roster', `not on the caller's roster: root`);
    await refused(
      checkSpawnContext(requested({ roster: ['x', 'lead', 'y', 'x'] }), caller, TARGET),
      'roster',
      `not on the caller's roster: x, y`,
    );
    await refused(checkSpawnContext(requested({ roster: ['helper'] }), { ...caller, roster: [] }, TARGET), 'roster', `not on the caller's roster: helper`);
  });

  it('verification and endpoint that differ from the target’s', async () => {
    await refused(checkSpawnContext(requested({ verification: 'true' }), caller, TARGET), 'verification', `"true" differs from the target's "npm test"`);
    await refused(checkSpawnContext(requested({ verification: undefined }), caller, TARGET), 'verification', `none is requested; the target's is "npm test"`);
    await refused(
      checkSpawnContext(requested({ verification: 'caller-only' }), caller, {}),
      'verification',
      `"caller-only" is requested; the target has none`,
    );
    await refused(
      checkSpawnContext(requested({ endpoint: 'http://evil.example' }), caller, TARGET),
      'endpoint',
      `"http://evil.example" differs from the target's "http://127.0.0.1:7000"`,
    );
    await refused(checkSpawnContext(requested({ endpoint: undefined }), caller, TARGET), 'endpoint', `none is requested; the target's is "http://127.0.0.1:7000"`);
  });

  it('quotes what it was given, so a value cannot forge a reason', async () => {
    await refused(
      checkSpawnContext(requested({ base_branch: 'x" differs from the caller\'s "dev' }), caller, TARGET),
      'base_branch',
      `"x\\" differs from the caller's \\"dev" differs from the caller's "dev"`,
    );
  });

  it('checks in wire order and refuses the first field that fails', async () => {
    const bad = { workspace_root: join(tree, 'link-out'), base_branch: 'main', roster: ['x'], verification: 'v', endpoint: 'e' };
    await refused(checkSpawnContext(bad, caller, TARGET), 'workspace_root', /is not inside/);
    await refused(checkSpawnContext({ ...bad, workspace_root: tree }, caller, TARGET), 'base_branch', /differs/);
    await refused(checkSpawnContext({ ...bad, workspace_root: tree, base_branch: 'dev' }, caller, TARGET), 'roster', /x$/);
    await refused(checkSpawnContext({ ...bad, workspace_root: tree, base_branch: 'dev', roster: [] }, caller, TARGET), 'verification', /"v"/);
    await refused(checkSpawnContext({ ...bad, workspace_root: tree, base_branch: 'dev', roster: [], verification: 'npm test' }, caller, TARGET), 'endpoint', /"e"/);
  });

  it('a context that is not one (handed over unchecked by an embedder)', async () => {
    await refused(checkSpawnContext({ ...requested(), extra: 1 } as unknown as SpawnContext, caller, TARGET), 'extra', 'not a spawn context field');
    await refused(checkSpawnContext(requested({ workspace_root: 7 as unknown as string }), caller, TARGET), 'workspace_root', /expected string/i);
    await refused(checkSpawnContext(requested({ roster: 'helper' as unknown as string[] }), caller, TARGET), 'roster', /expected array/i);
    // A missing roster is the wire's default, []: a narrower roster, accepted.
    const { roster: _omitted, ...noRoster } = requested();
    assert.deepEqual((await checkSpawnContext(noRoster as SpawnContext, caller, TARGET)).roster, []);
  });
});

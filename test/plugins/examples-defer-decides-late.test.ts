/**
 * A `serve` rebuilding an example in the background decided at its start: it moved aside
 * whatever was at the example's place by the time it got there, so a copy another gateway put
 * there a moment after the judgment went too, and its deferred build ran (20 s) even when another
 * gateway had put this very build in place meanwhile. Now only the copy judged is moved aside (a
 * copy put there since is judged again and put back when current), and a deferred build decides
 * again as it starts.
 */
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { ensureExamplesBuilt } from '../../main/plugins/build/index.js';
import { identityOf, moveAsideJudged } from '../../main/plugins/build/examples-publish.js';

const scratch = mkdtempSync(join(tmpdir(), 'chatty-examples-late-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

it('a deferred build finding this very build put in place by another gateway since its start builds nothing and keeps it', { timeout: 180_000 }, async () => {
  const source = join(scratch, 'examples');
  mkdirSync(join(source, 'far', 'src'), { recursive: true });
  writeFileSync(join(source, 'far', 'module.toml'), '[module]\nname = "far"\nversion = "1.0.0"\nexecution_mode = "remote"\n[protocols]\na2a = true\n');
  writeFileSync(join(source, 'far', 'src', 'index.js'), 'export const plugin = {};');
  const cacheDir = join(scratch, 'cache');
  let builds = 0;
  const build = async (dir: string): Promise<void> => {
    builds++;
    writeFileSync(join(dir, 'plugin.wasm'), 'x');
  };
  const modules = await ensureExamplesBuilt(source, { cacheDir, build });
  writeFileSync(join(source, 'far', 'src', 'index.js'), 'export const plugin = { changed: true };');
  // This gateway (serve) defers its rebuild; another gateway builds the new sources and puts them in place first.
  const deferred: (() => Promise<string>)[] = [];
  await ensureExamplesBuilt(source, { cacheDir, build, defer: (_name, buildOne) => deferred.push(buildOne) });
  assert.equal(deferred.length, 1);
  await ensureExamplesBuilt(source, { cacheDir, build });
  const theirs = lstatSync(join(modules, 'far')).ino;
  builds = 0;
  assert.equal(await deferred[0]!(), join(modules, 'far'));
  assert.equal(builds, 0, 'the deferred build ran though this very build was in place');
  assert.equal(lstatSync(join(modules, 'far')).ino, theirs, "the other gateway's copy was replaced");
});

it('only the copy judged is moved aside: one another gateway put there since is judged again, and kept when current', async () => {
  const place = join(scratch, 'modules', 'far');
  const aside = join(scratch, 'building');
  mkdirSync(place, { recursive: true });
  mkdirSync(aside, { recursive: true });
  writeFileSync(join(place, 'stamp'), 'stale');
  const isCurrentAt = async (dir: string): Promise<boolean> => readFileSync(join(dir, 'stamp'), 'utf8') === 'fresh';
  const judged = await identityOf(place);
  assert.equal(await isCurrentAt(place), false);
  // Another gateway puts the current build in place between the judgment and the move.
  const fresh = join(scratch, 'fresh');
  mkdirSync(fresh);
  writeFileSync(join(fresh, 'stamp'), 'fresh');
  renameSync(place, join(scratch, 'stale-gone'));
  renameSync(fresh, place);
  const theirs = lstatSync(place).ino;
  assert.equal(await moveAsideJudged(place, judged, aside, isCurrentAt), true, 'a current copy is there: nothing to build');
  assert.equal(lstatSync(place).ino, theirs, "the other gateway's fresh copy was moved aside");
  assert.deepEqual(readdirSync(aside), []);
  // The copy judged is moved aside and removed; nothing there is no error.
  const judgedNow = await identityOf(place);
  writeFileSync(join(place, 'stamp'), 'stale');
  assert.equal(await moveAsideJudged(place, judgedNow, aside, isCurrentAt), false);
  assert.deepEqual([readdirSync(join(scratch, 'modules')), readdirSync(aside)], [[], []]);
  assert.equal(await moveAsideJudged(place, undefined, aside, isCurrentAt), false);
  // A copy put there since that is not current goes as the judged one would.
  mkdirSync(place);
  writeFileSync(join(place, 'stamp'), 'other version');
  assert.equal(await moveAsideJudged(place, judgedNow, aside, isCurrentAt), false);
  assert.deepEqual([readdirSync(join(scratch, 'modules')), readdirSync(aside)], [[], []]);
});

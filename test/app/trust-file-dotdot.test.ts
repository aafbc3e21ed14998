// b964190 refuses a trust file whose way passes a *link* lying in the workspace. But a plain
// folder lying in the workspace is just as much the agents': when the way goes through it and
// back out with `..` (in a link's target, or in the file's own path), one approved
// `mv sub sub.old && ln -s a/b sub` re-points where `sub/..` leads, and the approvals file is
// then read from (and written to) the workspace. linksOnTheWay() steps over real folders and
// lexically drops their `..`, and resolve(file) drops the file path's own `..` before any check.
// (The reviewer's repro, /tmp/review-embedding; it failed before: the attach was accepted both
// ways.) Now every part met on the way (not only links) must lie outside the workspace, on the
// path as written (no resolve() before the walk: trust-files-guard.ts's placesOnTheWay).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import { startGateway, type RunningGateway } from '../../test/helpers/gateway.js';
import { windowAtPage } from '../../test/app/bridge-fixture.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'review-trust-dotdot-')));
const gateways: RunningGateway[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** <base>/home is the workspace, holding a plain folder `sub`; <base>/data/app is the app's state. */
function layout(name: string): { base: string; home: string } {
  const base = join(scratch, name);
  const home = join(base, 'home');
  mkdirSync(join(home, 'sub'), { recursive: true });
  mkdirSync(join(base, 'data', 'app'), { recursive: true, mode: 0o700 });
  return { base, home };
}

/** The agent's move: `sub` becomes a link one level deeper, so `sub/../..` is the workspace itself. */
function agentRepoints(home: string): void {
  renameSync(join(home, 'sub'), join(home, 'sub.old'));
  mkdirSync(join(home, 'a', 'b'), { recursive: true });
  mkdirSync(join(home, 'data', 'app'), { recursive: true });
  symlinkSync(join(home, 'a', 'b'), join(home, 'sub'));
}

test("a link outside the workspace whose target passes a plain folder of the workspace and `..` out again is refused", async () => {
  const { base, home } = layout('target');
  // ~/.config-like link outside the workspace, written with a detour through the workspace.
  symlinkSync(`${home}/sub/../../data`, join(base, 'cfg'));
  const file = join(base, 'cfg', 'app', 'approvals.json');
  const gw = await startGateway(undefined, { approvals: { file }, broker: { root: { workspaceRoot: home }, log: () => {} } });
  gateways.push(gw);
  let refused = false;
  try {
    attachDesktopBridge(gw.gateway, windowAtPage())();
  } catch {
    refused = true;
  }
  // What the accepted attach lets happen: the agent re-points `sub` and writes the file.
  agentRepoints(home);
  writeFileSync(join(home, 'data', 'app', 'approvals.json'), '{"agent":true}');
  const readThroughTheName = readFileSync(file, 'utf8');
  assert.equal(readThroughTheName, '{"agent":true}', 'premise: the file named is now the agent\'s');
  assert.ok(refused, 'the attach was accepted although the way to approvals.json passes a folder of the workspace');
});

test("a trust file named with `..` after a plain folder of the workspace is refused", async () => {
  const { base, home } = layout('raw');
  const file = `${home}/sub/../../data/app/plugin-grants.json`; // as an embedder might concatenate it
  const gw = await startGateway(undefined, { broker: { root: { workspaceRoot: home }, log: () => {} } });
  gateways.push(gw);
  let refused = false;
  try {
    attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [file] })();
  } catch {
    refused = true;
  }
  agentRepoints(home);
  writeFileSync(join(home, 'data', 'app', 'plugin-grants.json'), '{"agent":true}');
  assert.equal(readFileSync(file, 'utf8'), '{"agent":true}', 'premise: the file named is now the agent\'s');
  assert.ok(refused, 'the attach was accepted although the trust file\'s path passes a folder of the workspace');
  void base;
});

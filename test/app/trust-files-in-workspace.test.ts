// The gateway's approvals file and the plugins' grants file were written as plain writes when the
// agents' workspace held them (CHATTY_WORKSPACE=$HOME with userData in ~/.config): no danger tag,
// Approve by default, a folder rule proposed, and one approved write granted a plugin or added an
// "always allow" rule. Now attaching a bridge to such a gateway is refused, naming the file.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { attachDesktopBridge } from '../../main/app/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { windowAtPage } from './bridge-fixture.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-trust-files-')));
const gateways: RunningGateway[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A "home" with an app's state folder in ~/.config, and a gateway working in `workspace` (of it). */
async function home(name: string, workspace: (home: string) => string, approvals = true): Promise<{ gw: RunningGateway; userData: string }> {
  const dir = join(scratch, name);
  const userData = join(dir, '.config', 'chatty-example');
  mkdirSync(userData, { recursive: true, mode: 0o700 });
  const gw = await startGateway(undefined, { ...(approvals ? { approvals: { file: join(userData, 'approvals.json') } } : {}), broker: { root: { workspaceRoot: workspace(dir) }, log: () => {} } });
  gateways.push(gw);
  return { gw, userData };
}

test("a bridge is not attached when the agents' workspace holds the gateway's approvals file", async () => {
  const { gw } = await home('approvals', (dir) => dir);
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage()), /the agents' workspace .* holds the app's own file .*approvals\.json: one approved write/);
});

test("nor when it holds the grants file named in trustFiles, even one not made yet, or reached through a link", async () => {
  const { gw, userData } = await home('grants', (dir) => dir, false);
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [join(userData, 'plugin-grants.json')] }), /holds the app's own file .*plugin-grants\.json/);
  // The grants file named through a link outside the workspace to a folder in it, still to be made.
  const elsewhere = join(scratch, 'elsewhere');
  mkdirSync(elsewhere);
  symlinkSync(join(userData, 'later'), join(elsewhere, 'state'));
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [join(elsewhere, 'state', 'plugin-grants.json')] }), /holds the app's own file .*state\/plugin-grants\.json \(.*later\/plugin-grants\.json\)/);
});

test('a workspace apart from the app files is attached', async () => {
  const { gw, userData } = await home('apart', (dir) => {
    mkdirSync(join(dir, 'project'));
    return join(dir, 'project');
  });
  const detach = attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [join(userData, 'plugin-grants.json')] });
  detach();
});

test('nor when the grants file is a loop of links through the workspace (an agent there can end it in a file of its own)', async () => {
  const { gw, userData } = await home('loop', (dir) => {
    mkdirSync(join(dir, 'project'));
    return join(dir, 'project');
  });
  const grants = join(userData, 'plugin-grants.json');
  const inWorkspace = join(gw.gateway.broker.workspaceRoot!, 'grants-link');
  symlinkSync(inWorkspace, grants);
  symlinkSync(grants, inWorkspace);
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [grants] }), /plugin-grants\.json cannot be followed to where a write of it lands/);
});

test("nor when the way to the approvals file passes a link lying in the workspace (~/.config a link out of $HOME: an agent re-points it)", async () => {
  const dir = join(scratch, 'moved-config');
  const elsewhere = join(scratch, 'moved-config-data');
  mkdirSync(join(elsewhere, 'chatty-example'), { recursive: true, mode: 0o700 });
  mkdirSync(dir);
  symlinkSync(elsewhere, join(dir, '.config'));
  // Where the approvals file lands is outside the workspace ($HOME), but the link that leads
  // there lies in it: one approved `ln -sfn ~/mine ~/.config` makes the file the agent's.
  const gw = await startGateway(undefined, { approvals: { file: join(dir, '.config', 'chatty-example', 'approvals.json') }, broker: { root: { workspaceRoot: dir }, log: () => {} } });
  gateways.push(gw);
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage()), /the way to the app's own file .*approvals\.json passes the link .*moved-config\/\.config, which lies in the agents' workspace/);
});

test('nor when a link on the way leads through a second link lying in the workspace', async () => {
  const dir = join(scratch, 'second-link');
  const workspace = join(dir, 'project');
  const state = join(dir, 'state');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(state);
  // userData/app -> project/hop (in the workspace) -> state: the landing is outside, the hop is not.
  symlinkSync(state, join(workspace, 'hop'));
  mkdirSync(join(dir, 'user-data'));
  symlinkSync(join(workspace, 'hop'), join(dir, 'user-data', 'app'));
  const gw = await startGateway(undefined, { broker: { root: { workspaceRoot: workspace }, log: () => {} } });
  gateways.push(gw);
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [join(dir, 'user-data', 'app', 'plugin-grants.json')] }), /passes the link .*project\/hop, which lies in the agents' workspace/);
  // A link outside the workspace leading to a folder outside it is fine.
  const detach = attachDesktopBridge(gw.gateway, windowAtPage(), { trustFiles: [join(dir, 'user-data', 'plugin-grants.json')] });
  detach();
});

test("another bridged gateway's workspace may not hold this gateway's approvals file, nor the grants file another bridge names, in either order", { timeout: 120_000 }, async () => {
  // Each gateway's files were judged against its own workspaces only: gateway A working in <base>
  // and gateway B keeping its approvals file in <base>/state were both bridged, and A's agent's one
  // approved write of <base>/state/approvals.json added an "always allow" rule to B.
  const base = join(scratch, 'two-gateways');
  const state = join(base, 'state');
  mkdirSync(state, { recursive: true, mode: 0o700 });
  const bWork = join(scratch, 'two-gateways-b');
  mkdirSync(bWork);
  const a = await startGateway(undefined, { broker: { root: { workspaceRoot: base }, log: () => {} } });
  const b = await startGateway(undefined, { approvals: { file: join(state, 'approvals.json') }, broker: { root: { workspaceRoot: bWork }, log: () => {} } });
  const c = await startGateway(undefined, { broker: { root: { workspaceRoot: bWork }, log: () => {} } });
  gateways.push(a, b, c);
  for (const [first, second] of [[b, a], [a, b]] as const) {
    const detach = attachDesktopBridge(first.gateway, windowAtPage());
    try {
      assert.throws(() => attachDesktopBridge(second.gateway, windowAtPage()), /the agents' workspace .*two-gateways( \(another bridged gateway's\))? holds the app's own file .*two-gateways\/state\/approvals\.json( \(another bridge's\))?: one approved write/);
    } finally {
      detach();
    }
  }
  // The grants file a bridge names, as well: one registry's desk serving a gateway per window.
  const grants = join(state, 'plugin-grants.json');
  const detachC = attachDesktopBridge(c.gateway, windowAtPage(), { trustFiles: [grants] });
  try {
    assert.throws(() => attachDesktopBridge(a.gateway, windowAtPage()), /the agents' workspace .*two-gateways holds the app's own file .*plugin-grants\.json \(another bridge's\)/);
  } finally {
    detachC();
  }
  // Each alone, or once the other is gone, is attached.
  attachDesktopBridge(a.gateway, windowAtPage())();
  attachDesktopBridge(b.gateway, windowAtPage())();
});

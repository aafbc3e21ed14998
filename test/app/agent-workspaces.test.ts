// A gateway without broker.root.workspaceRoot was bridged unchecked: the bridge knew the agents'
// workspace only as that root, so a gateway whose bundled agents worked in the pages folder
// (bundledAgents({ workspace }) with detectWorkspace(pages)) had its page served and its bridge
// attached, and one approved write of page.js was the page that answers every later approval. Now
// a bridge is attached only to a gateway whose agents' workspaces are known: its root workspace,
// and the folders the embedder names in `agentWorkspaces` (required without a root, [] when its
// agents write no files), each kept apart from the pages, the package and the trust files.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { attachDesktopBridge, handleAppProtocol, preloadCopy } from '../../main/app/index.js';
import { bundledAgents, detectWorkspace } from '../../main/index.js';
import { SharedDirectory } from '../../main/agents/bundled.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { windowAtPage } from './bridge-fixture.js';
import { StandInSession } from './electron-stand-in/electron.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-agent-workspaces-')));
const gateways: RunningGateway[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function rootlessGateway(): Promise<RunningGateway> {
  const gw = await startGateway();
  gateways.push(gw);
  return gw;
}

/** A started gateway (with a root workspace of its own or none) and a folder `other` its agents also write in, holding a ui/ folder. */
async function gatewayAndOther(name: string, withRoot: boolean): Promise<{ gw: RunningGateway; other: string }> {
  const root = join(scratch, `${name}-${withRoot}-root`);
  const other = join(scratch, `${name}-${withRoot}-other`);
  mkdirSync(root);
  mkdirSync(join(other, 'ui'), { recursive: true });
  const gw = await startGateway(undefined, withRoot ? { broker: { root: { workspaceRoot: root } } } : {});
  gateways.push(gw);
  return { gw, other };
}

test('a bridge on a gateway without a workspace root, its agents working in the pages folder, is refused: the agents\' workspaces are unknown', async () => {
  const pages = join(scratch, 'pages');
  mkdirSync(pages);
  writeFileSync(join(pages, 'index.html'), '<!doctype html>');
  const gw = await rootlessGateway();
  const workspace = await detectWorkspace(pages);
  for (const agent of bundledAgents({ workspace })) gw.gateway.withVirtualAgent(agent.name, agent.runner, agent.card);
  handleAppProtocol(new StandInSession() as never, { pages });
  assert.throws(
    () => attachDesktopBridge(gw.gateway, windowAtPage()),
    /attachDesktopBridge: the gateway has no agents' workspace \(broker\.root\.workspaceRoot\), so nothing can check .*: give the gateway broker: \{ root: \{ workspaceRoot \} \} .*or name the folders its agents write in the bridge's agentWorkspaces option \(\[\] when they write no files\)/,
  );
  // Named, the folder is checked as a root workspace is.
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [workspace.workspaceRoot] }), /the pages folder .* and the agents' workspace .* overlap/);
});

test('agentWorkspaces are checked beside the root workspace: a folder the agents also write in that holds a trust file, or the package, is refused; one that is not there cannot be checked', async () => {
  const root = join(scratch, 'root');
  const other = join(scratch, 'other');
  mkdirSync(root);
  mkdirSync(join(other, 'config'), { recursive: true });
  const gw = await startGateway(undefined, { broker: { root: { workspaceRoot: root } } });
  gateways.push(gw);
  assert.throws(
    () => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [other], trustFiles: [join(other, 'config', 'plugin-grants.json')] }),
    /the agents' workspace .*other holds the app's own file/,
  );
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [process.cwd()] }), /and this package's folder .* overlap/);
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [join(scratch, 'not-made')] }), /agentWorkspaces\) does not exist/);
  attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [other] })(); // apart from everything: attached
});

test('a gateway without a workspace root is bridged when the embedder says its agents write no files (agentWorkspaces: [])', async () => {
  const gw = await rootlessGateway();
  const detach = attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [] });
  detach();
});

test("the folders named in agentWorkspaces are the gateway's: a second window's bridge need not name them again, and they stay checked after the window that named them closes", async () => {
  for (const withRoot of [true, false]) {
    const { gw, other } = await gatewayAndOther('named', withRoot);
    const first = windowAtPage();
    attachDesktopBridge(gw.gateway, first, { agentWorkspaces: [other] });
    const second = windowAtPage();
    const detach = attachDesktopBridge(gw.gateway, second); // the app's second window: the option not repeated
    try {
      first.destroy(); // the window that named the folder closes; the agents still write there
      assert.throws(() => handleAppProtocol(new StandInSession() as never, { pages: join(other, 'ui') }), /the pages folder .* and the agents' workspace .* overlap/, `root ${withRoot}`);
    } finally {
      detach();
    }
  }
});

test("a folder a later window's bridge named stays kept apart while the gateway's earlier bridge is attached, after that later window closes", async () => {
  for (const withRoot of [true, false]) {
    const { gw, other } = await gatewayAndOther('later', withRoot);
    const detachFirst = attachDesktopBridge(gw.gateway, windowAtPage(), withRoot ? {} : { agentWorkspaces: [] });
    const second = windowAtPage();
    attachDesktopBridge(gw.gateway, second, { agentWorkspaces: [other] });
    second.destroy(); // the window that named the folder closes; the gateway's agents still write there
    try {
      assert.throws(() => handleAppProtocol(new StandInSession() as never, { pages: join(other, 'ui') }), /the pages folder .* and the agents' workspace .* overlap/, `pages, root ${withRoot}`);
      assert.throws(() => preloadCopy(join(other, 'user-data')), /the preload copy folder .* and the agents' workspace .* overlap/, `preload copy, root ${withRoot}`);
    } finally {
      detachFirst();
    }
    // The gateway's last bridge gone: nothing of it is held (the folders are checked again at its next attach).
    handleAppProtocol(new StandInSession() as never, { pages: join(other, 'ui') });
  }
});

test("a folder named in agentWorkspaces by a path whose way passes a link lying in an agents' workspace is refused: one approved 'ln -sfn' would re-point it", async () => {
  const { gw, other } = await gatewayAndOther('relinked', true);
  const root = gw.gateway.broker.workspaceRoot!;
  symlinkSync(other, join(root, 'other-link')); // a link in the root workspace, an agent's to re-point
  assert.throws(
    () => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [join(root, 'other-link')] }),
    /the way to the agents' workspace .*other-link \(agentWorkspaces\) passes the link .*other-link, which lies in the agents' workspace .*relinked-true-root: one approved 'ln -sfn' there would re-point it; name the folder by its real path/,
  );
  // And a link in another named folder, leading to a third.
  const third = join(scratch, 'relinked-third');
  mkdirSync(third);
  symlinkSync(third, join(other, 'third-link'));
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [other, join(other, 'third-link')] }), /passes the link .*third-link, which lies in the agents' workspace .*relinked-true-other/);
  attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [other, third] })(); // by their real paths: attached
});

test("agents' workspaces one inside another are refused, and so is a named path leaving a workspace's folder with '..': one approved 'mv' and 'ln -s' re-points them without any link there at the attach", async () => {
  const { gw, other } = await gatewayAndOther('nested', true);
  const root = gw.gateway.broker.workspaceRoot!;
  const pages = join(other, 'ui');
  const nested = join(root, 'sub', 'ws'); // plain folders: no link on the way at the attach
  mkdirSync(nested, { recursive: true });
  assert.throws(
    () => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [nested] }),
    /the agents' workspace .*nested-true-root\/sub\/ws lies in the agents' workspace .*nested-true-root: its agents may write every folder on the way to it, and one approved 'mv' and 'ln -s' there would re-point it/,
  );
  // What the refusal stops: the root's agent swaps the way for links, and the path named leads to
  // the pages folder (the bundled SharedDirectory, which resolved it once, refuses it then; a
  // runner of the embedder's own that follows its path at each task would work there).
  const runner = new SharedDirectory(nested);
  renameSync(join(root, 'sub'), join(root, 'sub.old'));
  mkdirSync(join(root, 'x'));
  symlinkSync(pages, join(root, 'x', 'ws'));
  symlinkSync(join(root, 'x'), join(root, 'sub'));
  assert.equal(realpathSync(nested), pages, 'the path named now leads to the pages folder');
  await assert.rejects(runner.create({} as never, { roster: [] }), /outside the workspace/);
  // The root workspace lying in a named folder: that folder's agents may swap the root's way.
  assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [dirname(root)] }), /the agents' workspace .*nested-true-root lies in the agents' workspace /);
  // A named path that passes a folder of the root workspace and leaves it with '..'.
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  assert.throws(
    () => attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [`${root}/a/b/../../../nested-true-other`] }),
    /passes the folder .*nested-true-root\/a(\/b)?, which lies in the agents' workspace .*nested-true-root, and leaves it with '\.\.'/,
  );
  attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [other] })(); // apart: attached
});

test("a runner given its workspace by a path through a link resolves it once, as it is made: the link re-pointed by an agent after the attach moves nothing", async () => {
  const { gw, other } = await gatewayAndOther('runner-link', true);
  const root = gw.gateway.broker.workspaceRoot!;
  const pages = join(other, 'ui');
  const work = join(gw.gateway.broker.workspaceRoot!, '..', 'runner-link-work');
  mkdirSync(work);
  symlinkSync(realpathSync(work), join(root, 'work-link')); // the runner is given this; the bridge the real path
  const runner = new SharedDirectory(join(root, 'work-link'));
  const detach = attachDesktopBridge(gw.gateway, windowAtPage(), { agentWorkspaces: [realpathSync(work)] });
  try {
    rmSync(join(root, 'work-link'));
    symlinkSync(pages, join(root, 'work-link')); // the root's agent's approved ln -sfn
    assert.equal((await runner.create({} as never, { roster: [] })).dir, realpathSync(work), 'the folder it was made with, not the pages folder');
  } finally {
    detach();
  }
});

test("two gateways of one app, one's workspace inside the other's, are not both bridged (either order), nor is a folder named through a link in another bridged gateway's workspace: its agents may re-point the other's path", async () => {
  const base = join(scratch, 'two-gateways');
  const outer = join(base, 'A');
  const inner = join(outer, 'sub', 'ws');
  const apart = join(base, 'apart');
  mkdirSync(inner, { recursive: true });
  mkdirSync(apart);
  const start = async (workspaceRoot: string): Promise<RunningGateway> => {
    const gw = await startGateway(undefined, { broker: { root: { workspaceRoot } } });
    gateways.push(gw);
    return gw;
  };
  const [a, b] = [await start(outer), await start(inner)];
  for (const [first, second] of [[a, b], [b, a]] as const) {
    const detach = attachDesktopBridge(first.gateway, windowAtPage());
    try {
      assert.throws(
        () => attachDesktopBridge(second.gateway, windowAtPage()),
        /the agents' workspace .*two-gateways\/A\/sub\/ws( \(another bridged gateway's\))? lies in the agents' workspace .*two-gateways\/A( \(another bridged gateway's\))?: its agents may write every folder on the way to it/,
      );
    } finally {
      detach();
    }
    attachDesktopBridge(second.gateway, windowAtPage())(); // the other gone: attached
  }
  // A folder named for another gateway by a path through a link lying in A's workspace: A's agent's 'ln -sfn' re-points it.
  symlinkSync(apart, join(outer, 'apart-link'));
  const c = await start(join(base, 'apart'));
  const detach = attachDesktopBridge(a.gateway, windowAtPage());
  try {
    assert.throws(() => attachDesktopBridge(c.gateway, windowAtPage(), { agentWorkspaces: [join(outer, 'apart-link')] }), /passes the link .*two-gateways\/A\/apart-link, which lies in the agents' workspace .*two-gateways\/A/);
  } finally {
    detach();
  }
});

test("a folder named through a link is judged at every later attach too: a gateway whose workspace holds the link, bridged after, is refused, and so is a later bridge of the same gateway naming a folder that holds it", async () => {
  // Judged only when it was named before: gateway B's folder named <base>/link/ws (the link leading
  // elsewhere), then gateway A working in <base> was bridged, and A's agent's 'ln -sfn <pages> link'
  // made the path B's runner is given lead to the pages folder.
  const base = join(scratch, 'named-link');
  const elsewhere = join(scratch, 'named-link-elsewhere');
  mkdirSync(join(elsewhere, 'ws'), { recursive: true });
  mkdirSync(base);
  symlinkSync(elsewhere, join(base, 'link'));
  const bRoot = join(scratch, 'named-link-b');
  mkdirSync(bRoot);
  const a = await startGateway(undefined, { broker: { root: { workspaceRoot: base } } });
  const b = await startGateway(undefined, { broker: { root: { workspaceRoot: bRoot } } });
  const one = await rootlessGateway();
  gateways.push(a, b);
  const named = join(base, 'link', 'ws');
  const detachB = attachDesktopBridge(b.gateway, windowAtPage(), { agentWorkspaces: [named] });
  try {
    assert.throws(() => attachDesktopBridge(a.gateway, windowAtPage()), /the way to the agents' workspace .*named-link\/link\/ws \(agentWorkspaces, named before\) passes the link .*named-link\/link, which lies in the agents' workspace .*named-link: one approved 'ln -sfn'/);
  } finally {
    detachB();
  }
  attachDesktopBridge(a.gateway, windowAtPage())(); // B's bridges gone: its ways are not held against A
  const first = attachDesktopBridge(one.gateway, windowAtPage(), { agentWorkspaces: [named] });
  try {
    assert.throws(() => attachDesktopBridge(one.gateway, windowAtPage(), { agentWorkspaces: [base] }), /the way to the agents' workspace .*named-link\/link\/ws \(agentWorkspaces, named before\) passes the link/);
  } finally {
    first();
  }
});

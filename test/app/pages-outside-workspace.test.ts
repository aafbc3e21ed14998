// The page the bridge trusts must never be a file the agents may write: the example app served its
// pages from its own folder while its agents worked in that same folder (process.cwd()), so one
// approved write of page.js made an agent's script the approvals page. Now serving a `pages`
// folder and attaching a bridge to a gateway whose workspace root is inside it, is it, or contains
// it (through links too) is refused at start, in whichever order the two are called.
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { appProtocolHandler, attachDesktopBridge, DEFAULT_PAGE_URL, handleAppProtocol, type ProtocolSession } from '../../main/app/index.js';
import { startGateway, type RunningGateway } from '../helpers/gateway.js';
import { windowAtPage } from './bridge-fixture.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-pages-ws-')));
const gateways: RunningGateway[] = [];
after(async () => {
  for (const gw of gateways) await gw.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A fresh folder under the scratch dir, with its sub-folders. */
function folder(name: string, ...subs: string[]): string {
  const dir = join(scratch, name);
  for (const sub of ['', ...subs]) mkdirSync(join(dir, sub), { recursive: true });
  return dir;
}
const session = (): ProtocolSession & { schemes: string[] } => {
  const schemes: string[] = [];
  return { schemes, protocol: { handle: (scheme) => void schemes.push(scheme) } };
};
async function gatewayIn(workspaceRoot: string): Promise<RunningGateway> {
  const gw = await startGateway(undefined, { broker: { root: { workspaceRoot } } });
  gateways.push(gw);
  return gw;
}

test('attaching a bridge is refused when the served pages folder is the workspace root, inside it, contains it, or reaches it through a link', async () => {
  const cases: [string, (base: string) => { pages: string; workspace: string }][] = [
    ['equal', (base) => ({ pages: base, workspace: base })],
    ['pages inside the workspace', (base) => ({ pages: join(base, 'app'), workspace: base })],
    ['workspace inside the pages', (base) => ({ pages: base, workspace: join(base, 'work') })],
    // `..app` is a name like any other, not a way out of the workspace.
    ['pages inside the workspace, its name starting with two dots', (base) => ({ pages: join(base, '..app'), workspace: base })],
    ['pages through a link into the workspace', (base) => {
      symlinkSync(join(base, 'app'), join(scratch, `${base.split('/').at(-1)}-link`));
      return { pages: join(scratch, `${base.split('/').at(-1)}-link`), workspace: base };
    }],
  ];
  for (const [name, make] of cases) {
    const base = folder(name.replace(/[ ,]+/g, '-'), 'app', '..app', 'work');
    const { pages, workspace } = make(base);
    const gw = await gatewayIn(workspace);
    const s = session();
    handleAppProtocol(s, { pages });
    assert.throws(() => attachDesktopBridge(gw.gateway, windowAtPage()), /the pages folder .* and the agents' workspace .* overlap/, name);
  }
});

test('serving a pages folder is refused when a bridge is attached to a gateway whose workspace overlaps it', async () => {
  const base = folder('attached-first', 'app');
  const gw = await gatewayIn(base);
  const detach = attachDesktopBridge(gw.gateway, windowAtPage());
  const s = session();
  assert.throws(() => handleAppProtocol(s, { pages: join(base, 'app') }), /the pages folder .* and the agents' workspace .* overlap/);
  assert.deepEqual(s.schemes, [], 'nothing was served');
  detach();
  // Detached, that gateway's workspace no longer stands in the way.
  handleAppProtocol(s, { pages: join(base, 'app') });
  assert.deepEqual(s.schemes, ['app']);
});

test('pages and a workspace side by side are served and attached', async () => {
  const pages = folder('apart/pages');
  const gw = await gatewayIn(folder('apart/workspace'));
  handleAppProtocol(session(), { pages });
  const detach = attachDesktopBridge(gw.gateway, windowAtPage());
  detach();
});

test('pages named through a link in the workspace are served from where the link led when checked: the agents re-pointing the link reach nothing', async () => {
  const base = folder('link-in-workspace', 'workspace/evil', 'pages');
  const workspace = join(base, 'workspace');
  writeFileSync(join(base, 'pages', 'index.html'), 'the app page');
  writeFileSync(join(workspace, 'evil', 'index.html'), "an agent's page");
  const link = join(workspace, 'ui'); // the app names its pages through a link that lies in the workspace
  symlinkSync(join(base, 'pages'), link);
  const gw = await gatewayIn(workspace);
  const detach = attachDesktopBridge(gw.gateway, windowAtPage());
  const handler = appProtocolHandler({ pages: link }); // allowed: the link leads outside the workspace
  const page = async (): Promise<string> => (await handler(new Request(DEFAULT_PAGE_URL))).text();
  assert.equal(await page(), 'the app page');
  // One approved command of an agent: `ln -sfn evil ui` in its workspace.
  unlinkSync(link);
  symlinkSync(join(workspace, 'evil'), link);
  assert.equal(await page(), 'the app page', 'still the folder that was checked');
  detach();
});

test('a pages folder that does not exist at start is refused, a link to where the agents write later too: it must exist and be a folder', async () => {
  const base = folder('dangling', 'workspace');
  const workspace = join(base, 'workspace');
  const link = join(base, 'pages'); // the app's pages, named through a link to a build output not made yet
  symlinkSync(join(workspace, 'ui'), link);
  const gw = await gatewayIn(workspace);
  const detach = attachDesktopBridge(gw.gateway, windowAtPage());
  try {
    assert.throws(() => appProtocolHandler({ pages: link }), /the pages folder .*pages does not exist \(or leads through a link to nowhere\)/);
    assert.throws(() => appProtocolHandler({ pages: join(base, 'missing') }), /does not exist/);
    writeFileSync(join(base, 'file.html'), 'a file');
    assert.throws(() => appProtocolHandler({ pages: join(base, 'file.html') }), /is not a folder/);
    // Had it been allowed: one plain write of an agent in its own workspace made its file the page.
    mkdirSync(join(workspace, 'ui'));
    writeFileSync(join(workspace, 'ui', 'index.html'), "an agent's page");
    assert.throws(() => appProtocolHandler({ pages: link }), /overlap/, 'once it exists, it is where the agents write');
  } finally {
    detach();
  }
});

test("a page file is served only as a regular file in the pages folder: a link (into the agents' workspace or anywhere) is not followed", async () => {
  const base = folder('file-link', 'workspace', 'pages');
  const workspace = join(base, 'workspace');
  const pages = join(base, 'pages');
  writeFileSync(join(pages, 'index.html'), '<script src="page.js"></script>');
  writeFileSync(join(base, 'elsewhere.css'), 'body {}');
  symlinkSync(join(workspace, 'page.js'), join(pages, 'page.js'));
  symlinkSync(join(base, 'elsewhere.css'), join(pages, 'style.css'));
  const gw = await gatewayIn(workspace);
  const detach = attachDesktopBridge(gw.gateway, windowAtPage());
  const handler = appProtocolHandler({ pages }); // allowed: the folders are apart
  writeFileSync(join(workspace, 'page.js'), "/* an agent's script */"); // a plain write in the workspace
  const answers = await Promise.all(['page.js', 'style.css', 'index.html'].map(async (name) => (await handler(new Request(`app://chatty/${name}`))).status));
  detach();
  assert.deepEqual(answers, [404, 404, 200]);
});

test("attaching a bridge is refused when the workspace holds this package's own folder (its popover module, demo page and preload the window runs), or lies in it", async () => {
  const { PACKAGE_ROOT } = await import('../../main/app/app-pages.js');
  const own = realpathSync(PACKAGE_ROOT);
  // `npm start` in this repository (cwd is the package), CHATTY_WORKSPACE=$HOME over an app
  // that installed the package, and a workspace in the package's out/ folder.
  for (const workspace of [own, join(own, '..'), join(own, 'out', 'renderer')]) {
    const gw = await gatewayIn(workspace);
    // A clone in the system temp folder (as CI makes) has the test's pages folder in its parent
    // too: that overlap is then the one named first, and either refusal is the right one.
    const temp = realpathSync(tmpdir());
    const pagesToo = workspace === join(own, '..') && (temp === workspace || temp.startsWith(`${workspace}/`));
    assert.throws(
      () => attachDesktopBridge(gw.gateway, windowAtPage()),
      pagesToo
        ? /(the agents' workspace .* and this package's folder|the pages folder .* and the agents' workspace) .* ?overlap: an agent's write there would become/
        : /the agents' workspace .* and this package's folder .* overlap: an agent's write there would become the popover or the preload/,
      workspace,
    );
  }
});

test("a page file with a second name (hard-linked into the agents' workspace) and written there is served as it was read at start", async () => {
  const base = folder('hard-link', 'workspace', 'pages');
  const workspace = join(base, 'workspace');
  const pages = join(base, 'pages');
  writeFileSync(join(pages, 'index.html'), '<script src="page.js"></script>');
  writeFileSync(join(pages, 'page.js'), '/* the app page */');
  const gw = await gatewayIn(workspace);
  const detach = attachDesktopBridge(gw.gateway, windowAtPage());
  const handler = appProtocolHandler({ pages });
  linkSync(join(pages, 'page.js'), join(workspace, 'notes.js')); // one approved `ln` naming the page
  writeFileSync(join(workspace, 'notes.js'), "/* an agent's script */"); // then plain writes in the workspace
  const answers = await Promise.all(['page.js', 'index.html'].map(async (name) => Buffer.from(await (await handler(new Request(`app://chatty/${name}`))).arrayBuffer()).toString()));
  detach();
  assert.deepEqual(answers, ['/* the app page */', '<script src="page.js"></script>']);
});

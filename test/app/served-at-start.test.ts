// What the app: scheme serves is read once, when the handler is made (main/app/served-files.ts),
// never again from the disk. bd6f6b1 refused a page file while it had a second name (st_nlink > 1),
// but the second name only has to exist while it is written through: `ln <pages>/page.js notes.js`,
// a plain write of notes.js, a plain `rm notes.js`, and page.js was the agent's script with one
// name again. The package's own files (the popover modules) were not checked at all, a link inside
// the package (out/ elsewhere) was followed at every request, and the name count refused every
// file an installer deduplicates by hard links (ostree, Nix, pnpm).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { appProtocolHandler } from '../../main/app/index.js';
import { readPackageFiles, serveAppRequest } from '../../main/app/app-protocol.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'chatty-served-at-start-')));
after(() => rmSync(scratch, { recursive: true, force: true }));

function folder(...parts: string[]): string {
  const dir = join(scratch, ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}
async function body(res: Response): Promise<string> {
  return Buffer.from(await res.arrayBuffer()).toString();
}

test("a page file written through a second name that is then removed is served as it was at start, not with the agent's bytes", async () => {
  const workspace = folder('unlink', 'workspace');
  const pages = folder('unlink', 'pages');
  writeFileSync(join(pages, 'page.js'), '/* the app page */');
  const handler = appProtocolHandler({ pages });
  linkSync(join(pages, 'page.js'), join(workspace, 'notes.js')); // one approved `ln`
  writeFileSync(join(workspace, 'notes.js'), "/* an agent's script */"); // a plain write in the workspace
  const whileLinked = await handler(new Request('app://chatty/page.js'));
  unlinkSync(join(workspace, 'notes.js')); // a plain delete: st_nlink is 1 again
  const afterUnlink = await handler(new Request('app://chatty/page.js'));
  assert.deepEqual([whileLinked.status, await body(whileLinked)], [200, '/* the app page */']);
  assert.deepEqual([afterUnlink.status, await body(afterUnlink)], [200, '/* the app page */']);
});

test('a pages folder whose files had a second name before start (ostree, Nix, pnpm) is served', async () => {
  const store = folder('store');
  const pages = folder('installed-pages');
  writeFileSync(join(store, 'abc123'), '<p>the app page</p>');
  linkSync(join(store, 'abc123'), join(pages, 'index.html')); // the installer's hard link
  const res = await appProtocolHandler({ pages })(new Request('app://chatty/index.html'));
  assert.deepEqual([res.status, await body(res)], [200, '<p>the app page</p>']);
});

test("a package module hard-linked into the agents' workspace and written there is served as it was read", () => {
  const pkg = folder('package');
  const workspace = folder('package-workspace');
  mkdirSync(join(pkg, 'out', 'renderer', 'approvals'), { recursive: true });
  const module = join(pkg, 'out', 'renderer', 'approvals', 'popover.js');
  writeFileSync(module, '/* the popover that answers approvals */');
  const files = readPackageFiles(pkg);
  linkSync(module, join(workspace, 'notes.js'));
  writeFileSync(join(workspace, 'notes.js'), "/* an agent's popover */");
  const res = serveAppRequest({ url: 'app://chatty/out/renderer/approvals/popover.js', method: 'GET' }, files);
  assert.deepEqual([res.status, Buffer.from(res.body).toString()], [200, '/* the popover that answers approvals */']);
});

test("a link inside the package's served folders leading out of the package is refused at start, not followed", () => {
  const pkg = folder('package-link');
  const elsewhere = folder('package-link-build');
  mkdirSync(join(elsewhere, 'renderer'));
  writeFileSync(join(elsewhere, 'renderer', 'popover.js'), "/* an agent's popover */");
  symlinkSync(elsewhere, join(pkg, 'out'));
  assert.throws(() => readPackageFiles(pkg), /this package's out\/renderer leads out of its folder .* \(to .*package-link-build\/renderer\)/);
});

test('a page file that is not served says why in the log line of its 404', async () => {
  const pages = folder('refused-why');
  execFileSync('mkfifo', [join(pages, 'pipe.js')]);
  symlinkSync('/etc/hostname', join(pages, 'link.js'));
  const lines: string[] = [];
  const handler = appProtocolHandler({ pages, log: (line) => lines.push(line) });
  for (const name of ['pipe.js', 'link.js', 'none.js']) assert.equal((await handler(new Request(`app://chatty/${name}`))).status, 404, name);
  assert.deepEqual(lines, [
    'app protocol: 404 app://chatty/pipe.js (it is not a regular file)',
    'app protocol: 404 app://chatty/link.js (it is a symbolic link)',
    'app protocol: 404 app://chatty/none.js',
  ]);
});

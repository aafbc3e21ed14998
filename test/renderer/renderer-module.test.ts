// `chatty-protocol-gateway/renderer` is a browser module: what out/renderer/index.js imports, all
// the way down, is its own files and the display rule (no Node, no zod, nothing else of main), and
// the app: protocol serves each of them to the page.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { appAsset } from '../../main/app/app-protocol.js';
import { builtApp } from '../helpers/renderer-page.js';

/** Every module `entry` loads, followed through its static and dynamic imports: paths relative to `root`. */
function moduleGraph(root: string, entry: string): { files: string[]; bare: string[] } {
  const files = new Set<string>();
  const bare: string[] = [];
  const visit = (file: string): void => {
    const rel = relative(root, file).split(sep).join('/');
    if (files.has(rel)) return;
    files.add(rel);
    const source = readFileSync(file, 'utf8');
    for (const [, spec] of source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)|(?:^|\n)\s*import\s*'([^']+)'/g)) {
      if (spec === undefined) continue;
      if (!spec.startsWith('.')) bare.push(`${rel} imports ${spec}`);
      else visit(resolve(dirname(file), spec));
    }
  };
  visit(join(root, entry));
  return { files: [...files].sort(), bare };
}

test('the renderer entry imports only its own modules and the display rule, each served by the app: protocol', () => {
  const root = builtApp();
  const { files, bare } = moduleGraph(root, 'out/renderer/index.js');
  assert.deepEqual(bare, [], 'no package or node: import');
  assert.ok(files.includes('out/main/display/index.js') && files.includes('out/renderer/approvals/element.js'), files.join(', '));
  for (const file of files) {
    assert.match(file, /^out\/(renderer|main\/display)\//, `${file} is the renderer's or the display rule's`);
    assert.ok(appAsset(`app://chatty/${file}`), `${file} is served`);
  }
  // The demo page reaches the rest only through the public entry.
  const demo = moduleGraph(root, 'out/renderer-demo/app.js');
  assert.deepEqual(demo.bare, []);
  assert.deepEqual(
    demo.files.filter((f) => !f.startsWith('out/renderer-demo/') && !files.includes(f)),
    [],
    'renderer-demo imports nothing but its own files and the public renderer pieces',
  );
});

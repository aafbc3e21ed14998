// npm links the bins of dependencies into node_modules/.bin, but not the project's own. Without
// this link, `npx chatty-gateway` in a fresh clone would install the whole project again into
// npm's npx cache before running it. Runs after the build in `prepare`.
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'out', 'main', 'cli', 'bin.js');
const binDir = join(root, 'node_modules', '.bin');
if (process.platform !== 'win32' && existsSync(target) && existsSync(join(root, 'node_modules'))) {
  chmodSync(target, 0o755);
  mkdirSync(binDir, { recursive: true });
  const link = join(binDir, 'chatty-gateway');
  rmSync(link, { force: true });
  symlinkSync(relative(binDir, target), link);
}

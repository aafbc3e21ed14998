/**
 * The child process a watched plugin is built in (`build-process.ts`): `plugin build` of the
 * directory given, its failure as one message on stderr and exit status 1.
 */
import { buildPlugin } from '../build/index.js';

const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: build-process-entry <plugin directory>\n');
  process.exit(2);
}
try {
  await buildPlugin(dir);
  process.exit(0);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

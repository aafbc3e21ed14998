/**
 * The child process a plugin is built in while a gateway serves (`build-process.ts`): `plugin build` of the
 * directory given; a failure is exit status 1 with `{"buildFailed": message}` as stderr's last line.
 */
import { buildPlugin } from './index.js';

const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: build-process-entry <plugin directory>\n');
  process.exit(2);
}
try {
  await buildPlugin(dir);
  process.exit(0);
} catch (err) {
  // The last line, as JSON: what componentize-js printed before it is not the reason.
  process.stderr.write(`\n${JSON.stringify({ buildFailed: err instanceof Error ? err.message : String(err) })}\n`);
  process.exit(1);
}

/**
 * A separate process granting: `node --import tsx grants-writer.ts FILE PREFIX COUNT` remembers
 * COUNT plugins (`PREFIX0`, `PREFIX1`, …) in grants file FILE, one update each, as
 * `chatty-gateway plugin grant` does (test/plugins/grants-hostile: writers that race).
 */
import { GrantsFile } from '../../main/plugins/grants/index.js';

const [file, prefix, count] = process.argv.slice(2);
const grants = new GrantsFile(file!);
const digest = `sha256:${'a'.repeat(64)}`;
for (let i = 0; i < Number(count); i++) grants.remember(`${prefix}${i}`, digest, [{ capability: 'file', detail: 'read files under ./data' }]);

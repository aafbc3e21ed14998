// `prepack`: the package is packed from a fresh build (`prepare` then builds out/ again), so no
// file of a source that was renamed or removed since the last build goes into the tarball.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

rmSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'out'), { recursive: true, force: true });

// Loaded before @doyensec/electronegativity (scan.ts requires it; `node -r` it for the tool's own
// CLI). Two redirections, for the tool's files only:
// - `commander`: its CLI was written for commander 2 and does not declare it; the project's own
//   CLI needs commander 14 at the top of node_modules, so commander 2 is installed beside it under
//   the alias `commander-v2` and handed to the tool here.
// - `got`: the tool fetches translations and Electron's release list from the network; the scan
//   runs offline on any machine, so every request fails at once (the tool then uses its bundled
//   English strings and skips the release check, which is excluded anyway).
'use strict';
const Module = require('node:module');
const path = require('node:path');

const TOOL = `${path.sep}@doyensec${path.sep}electronegativity${path.sep}`;
const OFFLINE = path.join(__dirname, 'offline-got.cjs');
const original = Module._resolveFilename;

Module._resolveFilename = function resolveForElectronegativity(request, parent, ...rest) {
  if (parent && typeof parent.filename === 'string' && parent.filename.includes(TOOL)) {
    if (request === 'commander') return original.call(this, 'commander-v2', parent, ...rest);
    if (request === 'got') return OFFLINE;
  }
  return original.call(this, request, parent, ...rest);
};

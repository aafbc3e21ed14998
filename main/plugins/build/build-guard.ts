/**
 * The guard a build in a child process runs under (`build-process.ts`): a small Node process that
 * leads the build's process group, starts the build in it and stops the whole group (itself, the
 * build, the wizer running the plugin's top-level code) when its parent is gone.
 *
 * "Gone" is the end of its standard input: a pipe whose other end only the parent holds (close on
 * exec there, so no other child of the parent inherits it). The kernel closes it however the
 * parent goes: it exits, it is killed, or the worker thread that started the build is terminated
 * (its handles are closed with it). None of those runs the parent's own stop (its timer, its
 * `process.once('exit')`), so a looping plugin's build ran on for good after its embedder was gone.
 *
 * Why a process of its own: the build's main thread sits in componentize-js's `spawnSync` of
 * wizer for up to a minute and can notice nothing, and a watchdog thread in it reading the pipe
 * with `fs.read` holds a thread-pool thread until the pipe ends (an earlier draft: builds never
 * ended). The guard's
 * stdin is a non-blocking socket read on its own event loop, which does nothing else. The build
 * gets no stdin of the guard's (`ignore`): nothing it runs can hold the pipe or wait on it.
 *
 * CommonJS text run with `node -e` (needs no loader, from source or compiled, in Electron with
 * ELECTRON_RUN_AS_NODE too); the build's own arguments follow `--`, as they are, so the guard's
 * command line names the build's entry and folder as the build's does.
 */
export const BUILD_GUARD_SOURCE = `
const { spawn } = require('node:child_process');
const stopGroup = () => {
  try { process.kill(-process.pid, 'SIGKILL'); } catch { process.exit(1); }
};
process.stdin.on('end', stopGroup);
process.stdin.on('error', stopGroup);
process.stdin.on('close', stopGroup);
process.stdin.on('data', () => {});
const build = spawn(process.execPath, process.argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
build.on('error', (err) => {
  process.stderr.write('\\n' + JSON.stringify({ buildFailed: 'the build could not start: ' + err.message }) + '\\n');
  process.exit(1);
});
build.on('exit', (code, signal) => {
  if (signal !== null) {
    process.stderr.write('\\nthe build ended with ' + signal + '\\n');
    process.exit(1);
  }
  process.exit(code === null ? 1 : code);
});
`;

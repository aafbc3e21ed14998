// A worker agent in plain JavaScript (no build step), written against chatty-protocol-gateway/worker.
// Publish it on serve's command line and give it a task at serve's prompt:
//
//   npx chatty-gateway serve --agent helper="node examples/agents/helper.js"
//   > helper notes.txt remember the milk
//
// Each task is one run of this file, with its end of the socketpair at fd 3 and its working
// directory the task's workspace (a fresh git worktree in a repository). It asks the human before
// it writes, like any agent here: the task text is `<file> <text>`.
//
// Its imports are dynamic (`await import(…)` inside a function) so that the file runs whatever the
// "type" of the package.json beside it says: `npm init -y` writes "commonjs", where an `import`
// statement is a SyntaxError, and a copy of this file must run there too.
async function main() {
  const { writeFile } = await import('node:fs/promises');
  const { isAbsolute } = await import('node:path');
  const { connectWorker, serveOneTask } = await import('chatty-protocol-gateway/worker');

  const { session } = await connectWorker({ name: 'helper', description: 'writes a note into its workspace, once a person approves', version: '1.0.0', skills: [] });

  await serveOneTask(session, async (task, events) => {
    const [file, ...words] = task.params.text.trim().split(/\s+/);
    if (!file || words.length === 0) return { state: 'failed', message: 'give it as <file> <text>, e.g. notes.txt remember the milk' };
    // Only inside its workspace, whatever the person answers.
    if (isAbsolute(file) || file.split('/').includes('..')) return { state: 'failed', message: `${file}: a path inside the workspace, please` };
    events.status('working', `asking to write ${file}`);
    const verdict = await session.approve('write', file, `+1 -0`, { signal: task.signal });
    if (verdict !== 'approved') return { state: 'failed', message: `writing ${file} was denied` };
    await writeFile(file, `${words.join(' ')}\n`);
    const agents = await session.listAgents({ signal: task.signal });
    events.artifact(`wrote ${file} in ${process.cwd()}\n`);
    events.artifact(`the other agents here: ${agents.map((agent) => agent.name).filter((name) => name !== 'helper').join(', ')}\n`, true);
    return { state: 'completed' };
  });
  session.close();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

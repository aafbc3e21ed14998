/**
 * The LLM agent as a one-task worker on fd 3, exactly as `chatty-gateway worker --agent llm` runs
 * a `WorkerAgent` (main/cli/commands/worker.ts): hello with its card, one task through `run` with
 * the worker's real working directory as its workspace, its outcome, exit; SIGTERM ends its
 * commands. Its settings come from the environment the test's runner gives it.
 */
import { realpathSync } from 'node:fs';
import { llmAgent } from '../../../main/agents/llm/index.js';
import { connectWorker, serveOneTask } from '../../../main/worker/index.js';

const agent = llmAgent();
process.once('SIGTERM', () => {
  agent.shutdown?.();
  process.exit(143);
});
const { session, hello } = await connectWorker(agent.card);
const workspace = realpathSync(process.cwd());
await serveOneTask(session, (task, events) => agent.run({ session, hello, task, events, workspace }));
session.close();

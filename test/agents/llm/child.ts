/**
 * The LLM agent as a one-task worker on fd 3 (what `chatty-gateway worker --agent llm` runs):
 * hello with its card, one task through `runLlmTask`, its outcome, exit. Its settings come from
 * the environment the test's runner gives it.
 */
import { LLM_AGENT_CARD, runLlmTask } from '../../../main/agents/llm/index.js';
import { connectWorker, serveOneTask } from '../../../main/worker/index.js';

const { session } = await connectWorker(LLM_AGENT_CARD);
await serveOneTask(session, (task, events) => runLlmTask(session, task, events));
session.close();

import type { WorkerAgent } from '../kind.js';
import { killRunningCommands } from '../scripted/index.js';
import { LLM_AGENT_CARD } from './card.js';
import { runLlmTask, type LlmAgentOptions } from './run-llm-task.js';

/**
 * The LLM agent as a worker kind (`chatty-gateway worker --agent llm`): its card, one task through
 * `runLlmTask` in the worker's workspace, and on SIGTERM the approved commands still running ended.
 */
export function llmAgent(options: Omit<LlmAgentOptions, 'workspace'> = {}): WorkerAgent {
  return {
    card: LLM_AGENT_CARD,
    run: ({ session, task, events, workspace }) => runLlmTask(session, task, events, { ...options, workspace }),
    shutdown: killRunningCommands,
  };
}

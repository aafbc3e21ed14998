import type { WorkerAgent } from './kind.js';

/**
 * The agent kinds `chatty-gateway worker --agent <kind>` knows, each loaded only when chosen.
 * `scripted` is the default. (The LLM agent, `main/agents/llm/`, registers here as `llm`.)
 */
export const AGENT_KINDS: Record<string, () => Promise<WorkerAgent>> = {
  scripted: async () => (await import('./scripted/index.js')).scriptedAgent(),
};

export const DEFAULT_AGENT_KIND = 'scripted';

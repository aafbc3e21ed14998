import type { WorkerAgent } from './kind.js';

/**
 * The agent kinds `chatty-gateway worker --agent <kind>` knows, each loaded only when chosen.
 * `scripted` (the reference agent) is the default; `llm` is the LLM agent (`main/agents/llm/`).
 */
export const AGENT_KINDS: Record<string, () => Promise<WorkerAgent>> = {
  scripted: async () => (await import('./scripted/index.js')).scriptedAgent(),
  llm: async () => (await import('./llm/index.js')).llmAgent(),
};

export const DEFAULT_AGENT_KIND = 'scripted';

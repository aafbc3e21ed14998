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

/** The kinds' names, for the command line's choices (importing this loads no agent). */
export const AGENT_KIND_NAMES: readonly string[] = Object.keys(AGENT_KINDS);

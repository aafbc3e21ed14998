import type { Card } from '../../worker/index.js';

/** The card the LLM agent's worker says hello with. */
export const LLM_AGENT_CARD = {
  name: 'llm',
  display_name: 'LLM agent',
  description:
    "A language model (any OpenAI-compatible chat-completions API) working on the task with the gateway's plugin tools, other agents, questions to the user, and commands and file writes the user approves.",
  version: '1.0.0',
  skills: [
    {
      name: 'tool-use',
      description: "Calls the gateway's MCP plugin tools, invokes other agents, asks the user; runs commands and writes files in its workspace after approval.",
      examples: ['summarise the README and list the open TODOs', 'run the tests and fix what fails'],
    },
  ],
} as const satisfies Card;

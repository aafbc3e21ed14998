/**
 * The LLM agent (`chatty-gateway worker --agent llm`): a tool-calling loop against any
 * OpenAI-compatible chat-completions API, whose tools are the gateway's MCP plugin tools and the
 * fabric's calls. See docs/agents.md, "The LLM agent".
 */
export { llmAgent } from './llm-agent.js';
export { runLlmTask, type LlmAgentOptions } from './run-llm-task.js';
export { LLM_AGENT_CARD } from './card.js';
export { LLM_ENV, LlmConfigError, readLlmConfig, type LlmConfig } from './config.js';
export { GATEWAY_ENV, GatewayLocationError, gatewayWorkerEnv, locateGateway, type GatewayLocation } from './gateway-location.js';
export { ModelApiError } from './model-error.js';
export { GatewayUnavailableError, PluginTools } from './plugin-tools.js';
export { FABRIC_TOOL_NAMES } from './fabric-tools.js';
export type { AgentTool } from './agent-tool.js';

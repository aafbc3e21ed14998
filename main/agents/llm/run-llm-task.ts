import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { TaskMapper, type TaskEvents, type TaskOutcome, type WorkerSession, type WorkerTask } from '../../worker/index.js';
import { pinWorkspace } from '../scripted/index.js';
import type { AgentTool } from './agent-tool.js';
import { LLM_ENV, LlmConfigError, readLlmConfig, type LlmConfig } from './config.js';
import { fabricTools } from './fabric-tools.js';
import { GatewayLocationError, locateGateway, type GatewayLocation } from './gateway-location.js';
import { ModelApiError } from './model-error.js';
import { GatewayUnavailableError, PluginTools } from './plugin-tools.js';
import { commandEnv } from './command-env.js';
import { systemPrompt } from './system-prompt.js';
import { runToolLoop, type Usage } from './tool-loop.js';

export interface LlmAgentOptions {
  /** Where the settings are read (`CHATTY_LLM_*`, `CHATTY_GATEWAY_*`); default `process.env`. Also the base of an approved command's environment. */
  env?: NodeJS.ProcessEnv;
  /** The settings, instead of reading `CHATTY_LLM_*` from `env`. */
  config?: LlmConfig;
  /** The gateway whose plugin tools to offer, instead of `locateGateway(env)`; `null`: none. */
  gateway?: GatewayLocation | null;
  /** Where commands run and files are written; default `process.cwd()` (the runner starts the worker in its workspace). */
  workspace?: string;
}

/**
 * Runs one task with a language model: the task's text is the user's message; the model may call
 * the gateway's MCP plugin tools and the fabric's calls (`list_agents`, `invoke_agent`,
 * `ask_user`, `exec` and `write_file` after the user's approval, `post_message`) for at most
 * `CHATTY_LLM_MAX_TURNS` requests; its streamed text becomes the task's artifact chunks. Resolves
 * with the task's outcome (for `serveOneTask`): `completed` when the model answered; `failed` with
 * a clear message for a missing setting, the model API failing or out of turns, an unreachable
 * gateway named by the environment; `canceled` when the broker cancels the task. Never rejects.
 */
export async function runLlmTask(session: WorkerSession, task: WorkerTask, events: TaskEvents, options: LlmAgentOptions = {}): Promise<TaskOutcome> {
  const map = new TaskMapper(events);
  const env = options.env ?? process.env;
  const signal = task.signal;
  let plugins: PluginTools | undefined;
  let releaseWorkspace: (() => Promise<void>) | undefined;
  try {
    const config = options.config ?? readLlmConfig(env);
    const workspace = options.workspace ?? process.cwd();
    // Held open for the task: write_file starts from this folder and exec runs in it, not by its path (pinWorkspace).
    releaseWorkspace = await pinWorkspace(workspace);

    let pluginNote: string | undefined;
    const gateway = options.gateway === undefined ? locateGateway(env) : options.gateway;
    if (gateway === null || gateway === undefined) {
      pluginNote = 'no gateway is configured';
    } else {
      map.step('listing the plugin tools of the gateway');
      try {
        plugins = await PluginTools.connect(gateway, signal);
      } catch (err) {
        if (signal.aborted || gateway.explicit || !(err instanceof GatewayUnavailableError || err instanceof GatewayLocationError)) throw err;
        pluginNote = `the gateway found in ${gateway.socketPath} is not usable: ${err.message}`;
        map.step(`no plugin tools: ${pluginNote}`);
      }
    }

    const tools: AgentTool[] = [
      ...(plugins?.tools ?? []),
      ...fabricTools({ session, map, workspace, commandEnv: commandEnv(env, [LLM_ENV.apiKey]), execTimeoutMs: config.execTimeoutMs }),
    ];
    const client = new OpenAI({
      baseURL: config.baseUrl,
      apiKey: config.apiKey,
      organization: null,
      project: null,
      maxRetries: config.maxRetries,
      timeout: config.timeoutMs,
    });
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: systemPrompt({ workspace, pluginModules: plugins?.modules ?? [], pluginNote }) },
      { role: 'user', content: task.params.text },
    ];
    map.step(`asking ${config.model}`);
    const end = await runToolLoop(messages, { client, baseUrl: config.baseUrl, model: config.model, maxTurns: config.maxTurns, tools, map, signal });
    const metadata = usageMetadata(end.usage, config.model, end.turns);
    if (end.kind === 'out-of-turns') {
      const outcome = map.failed(`the model made tool calls in all ${config.maxTurns} turns without a final answer (${LLM_ENV.maxTurns})`);
      return metadata ? { ...outcome, metadata } : outcome;
    }
    const outcome = map.done();
    return metadata ? { ...outcome, metadata } : outcome;
  } catch (err) {
    if (signal.aborted) return map.canceled('cancelled by the broker');
    if (err instanceof LlmConfigError || err instanceof ModelApiError || err instanceof GatewayLocationError || err instanceof GatewayUnavailableError) {
      return map.failed(err.message);
    }
    return map.failed(`the LLM agent failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await plugins?.close();
    await releaseWorkspace?.();
  }
}

function usageMetadata(usage: Usage | undefined, model: string, turns: number): TaskOutcome['metadata'] {
  if (!usage) return undefined;
  return {
    usage: {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      lines: [`${model}: ${turns} request${turns === 1 ? '' : 's'}, ${usage.inputTokens} tokens in, ${usage.outputTokens} out`],
    },
  };
}

import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { TaskMapper } from '../../worker/index.js';
import { ToolRefusal, type AgentTool } from './agent-tool.js';
import { modelApiError } from './model-error.js';
import { streamTurn } from './model-stream.js';

/** The most text of one tool result the model is sent (the rest is cut, and it is told so). */
export const MAX_TOOL_RESULT_CHARS = 64 * 1024;

export interface ToolLoopOptions {
  client: OpenAI;
  baseUrl: string;
  model: string;
  maxTurns: number;
  tools: readonly AgentTool[];
  map: TaskMapper;
  signal: AbortSignal;
}

/** How the loop ended: with the model's answer (streamed already), or out of turns. */
export type LoopEnd =
  | { kind: 'answered'; usage: Usage | undefined; turns: number }
  | { kind: 'out-of-turns'; usage: Usage | undefined; turns: number };

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * The tool-calling loop: ask the model (streaming its text into the task as artifact chunks), run
 * the tools it calls one after another (each a `working` status first), send their results back,
 * and again, until it answers without a tool call or `maxTurns` requests have been made. A tool's
 * refusal, bad arguments and an unknown tool are results the model reads; the model API's errors
 * throw a `ModelApiError`; a tool's other errors (the connection to the broker gone) throw as they are.
 */
export async function runToolLoop(messages: ChatCompletionMessageParam[], options: ToolLoopOptions): Promise<LoopEnd> {
  const { map, signal } = options;
  const byName = new Map(options.tools.map((t) => [t.name, t]));
  const tools: ChatCompletionTool[] = options.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
  let usage: Usage | undefined;
  let streamedBefore = false;
  for (let turn = 1; turn <= options.maxTurns; turn++) {
    signal.throwIfAborted();
    let firstDelta = true;
    const onText = (delta: string) => {
      // Text of a later turn starts a new paragraph of the task's answer.
      if (firstDelta && streamedBefore) map.textDelta('\n\n');
      firstDelta = false;
      streamedBefore = true;
      map.textDelta(delta);
    };
    let reply;
    try {
      reply = await streamTurn(options.client, { model: options.model, messages, tools }, onText, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw modelApiError(err, options.baseUrl, options.model);
    }
    if (reply.usage) usage = { inputTokens: (usage?.inputTokens ?? 0) + reply.usage.inputTokens, outputTokens: (usage?.outputTokens ?? 0) + reply.usage.outputTokens };
    if (reply.toolCalls.length === 0) return { kind: 'answered', usage, turns: turn };

    messages.push({
      role: 'assistant',
      content: reply.text === '' ? null : reply.text,
      tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    for (const call of reply.toolCalls) {
      const content = await runOne(byName, call.name, call.arguments, map, signal);
      messages.push({ role: 'tool', tool_call_id: call.id, content: cut(content) });
    }
  }
  return { kind: 'out-of-turns', usage, turns: options.maxTurns };
}

async function runOne(byName: ReadonlyMap<string, AgentTool>, name: string, argumentsJson: string, map: TaskMapper, signal: AbortSignal): Promise<string> {
  let args: unknown;
  try {
    args = argumentsJson.trim() === '' ? {} : JSON.parse(argumentsJson);
  } catch (err) {
    map.toolCall(name);
    return `error: the arguments are not JSON (${(err as Error).message}); call ${name} again with a JSON object`;
  }
  map.toolCall(name, args);
  const tool = byName.get(name);
  if (!tool) return `error: there is no tool named ${JSON.stringify(name)}; the tools are: ${[...byName.keys()].join(', ')}`;
  try {
    return await tool.run(args, signal);
  } catch (err) {
    if (err instanceof ToolRefusal) return `error: ${err.message}`;
    throw err;
  }
}

function cut(text: string): string {
  if (text.length <= MAX_TOOL_RESULT_CHARS) return text;
  return `${text.slice(0, MAX_TOOL_RESULT_CHARS)}\n[… ${text.length - MAX_TOOL_RESULT_CHARS} more characters cut]`;
}

import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

/** One tool call the model made, its arguments still the JSON text it wrote. */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One model turn, gathered from its stream. */
export interface ModelTurn {
  text: string;
  toolCalls: ModelToolCall[];
  finishReason: string | null;
  usage: { inputTokens: number; outputTokens: number } | undefined;
}

export interface TurnRequest {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
}

/**
 * One streamed chat completion (`stream: true`, SSE): each content delta goes to `onText` as it
 * arrives; tool calls are put together from their deltas by index (a server that sends a whole
 * call in one chunk works the same). Only the first choice is read. Errors are the client library's;
 * an aborted `signal` rejects with its reason, also when the stream was already being read.
 */
export async function streamTurn(client: OpenAI, request: TurnRequest, onText: (delta: string) => void, signal: AbortSignal): Promise<ModelTurn> {
  const stream = await client.chat.completions.create(
    {
      model: request.model,
      messages: request.messages,
      stream: true,
      ...(request.tools.length > 0 ? { tools: request.tools } : {}),
    },
    { signal },
  );
  let text = '';
  let finishReason: string | null = null;
  let usage: ModelTurn['usage'];
  const calls = new Map<number, ModelToolCall>();
  for await (const chunk of stream) {
    if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    const choice = chunk.choices.find((c) => c.index === 0) ?? chunk.choices[0];
    if (!choice) continue;
    const delta = choice.delta;
    if (typeof delta?.content === 'string' && delta.content !== '') {
      text += delta.content;
      onText(delta.content);
    }
    for (const part of delta?.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
      calls.set(part.index, call);
      if (part.id) call.id = part.id;
      const name = part.function?.name;
      if (name && name !== call.name) call.name += name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  // The library ends an aborted stream quietly, as if the model had finished: it has not.
  signal.throwIfAborted();
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => ({ ...call, id: call.id === '' ? `call_${index}` : call.id }));
  return { text, toolCalls, finishReason, usage };
}

/**
 * A stand-in for an OpenAI-compatible chat-completions API: a real `node:http` server on
 * 127.0.0.1 answering `POST /v1/chat/completions` from a script, one step per request, with an SSE
 * stream (`data: <chunk>` lines, then `data: [DONE]`) when the request says `stream: true`, and one
 * JSON completion otherwise. A step sees the request (parsed with the schema below) and may throw
 * an assertion: the server then answers HTTP 500 and keeps the error in `failures`, so the test
 * can say which check failed rather than only that the task did.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

export const ChatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({ role: z.literal('assistant'), content: z.string().nullable().optional(), tool_calls: z.array(ToolCallSchema).optional() }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
]);

export const ChatRequest = z.object({
  model: z.string(),
  messages: z.array(ChatMessage),
  stream: z.boolean().optional(),
  tools: z
    .array(
      z.object({
        type: z.literal('function'),
        function: z.object({ name: z.string(), description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional() }),
      }),
    )
    .optional(),
});

export type ChatMessage = z.infer<typeof ChatMessage>;
export type ChatRequest = z.infer<typeof ChatRequest>;

/** What one step answers: text (each string one streamed chunk), tool calls, or an HTTP error. */
export type Reply =
  | { text: string | readonly string[]; usage?: { prompt_tokens: number; completion_tokens: number } }
  | { toolCalls: readonly { id: string; name: string; arguments: unknown }[]; text?: string }
  | { status: number; error: string }
  /** Never answered: the response stays open until the client gives up or the server closes. */
  | { hang: true };

export type Step = (request: ChatRequest) => Reply;

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: ChatRequest;
}

export class StandInModel {
  readonly requests: RecordedRequest[] = [];
  readonly failures: Error[] = [];
  private next = 0;
  private readonly arrivals: { count: number; resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    private readonly script: readonly Step[],
  ) {}

  /** Starts on an ephemeral loopback port. */
  static async start(script: readonly Step[]): Promise<StandInModel> {
    let model: StandInModel | undefined;
    const server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => model!.answer(req.url ?? '', req.headers, raw, res));
    });
    model = new StandInModel(server, script);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return model;
  }

  /** The base URL a client is configured with (`CHATTY_LLM_BASE_URL`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Resolves once `count` requests have arrived. */
  requested(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push({ count, resolve }));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(path: string, headers: IncomingHttpHeaders, raw: string, res: import('node:http').ServerResponse): void {
    const fail = (status: number, message: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message, type: 'stand_in_error' } }));
    };
    if (path !== '/v1/chat/completions') return fail(404, `no route ${path}`);
    let body: ChatRequest;
    try {
      body = ChatRequest.parse(JSON.parse(raw));
    } catch (err) {
      this.failures.push(err as Error);
      return fail(400, `stand-in: the request is not a chat completion: ${(err as Error).message}`);
    }
    this.requests.push({ path, headers, body });
    for (const waiter of this.arrivals.filter((w) => this.requests.length >= w.count)) waiter.resolve();
    const step = this.script[this.next++];
    if (!step) {
      const err = new Error(`stand-in: request ${this.next} was not expected (the script has ${this.script.length})`);
      this.failures.push(err);
      return fail(500, err.message);
    }
    let reply: Reply;
    try {
      reply = step(body);
    } catch (err) {
      this.failures.push(err as Error);
      return fail(500, `stand-in: check failed: ${(err as Error).message}`);
    }
    if ('status' in reply) return fail(reply.status, reply.error);
    if ('hang' in reply) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      return;
    }
    if (body.stream === true) this.stream(body, reply, res);
    else this.whole(body, reply, res);
  }

  private stream(body: ChatRequest, reply: Exclude<Reply, { status: number } | { hang: true }>, res: import('node:http').ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = { id: `chatcmpl-${this.next}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model };
    const send = (choice: object, extra: object = {}) => res.write(`data: ${JSON.stringify({ ...base, choices: [choice], ...extra })}\n\n`);
    send({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    if ('toolCalls' in reply) {
      if (reply.text) send({ index: 0, delta: { content: reply.text }, finish_reason: null });
      reply.toolCalls.forEach((call, index) => {
        const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
        const cut = Math.floor(args.length / 2);
        // The name and id first, then the arguments in two pieces, as OpenAI streams them.
        send({ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null });
        send({ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(0, cut) } }] }, finish_reason: null });
        send({ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(cut) } }] }, finish_reason: null });
      });
      send({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    } else {
      for (const piece of typeof reply.text === 'string' ? [reply.text] : reply.text) send({ index: 0, delta: { content: piece }, finish_reason: null });
      send({ index: 0, delta: {}, finish_reason: 'stop' });
      if (reply.usage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens } })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }

  private whole(body: ChatRequest, reply: Exclude<Reply, { status: number } | { hang: true }>, res: import('node:http').ServerResponse): void {
    const message =
      'toolCalls' in reply
        ? {
            role: 'assistant',
            content: reply.text ?? null,
            tool_calls: reply.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
            })),
          }
        : { role: 'assistant', content: typeof reply.text === 'string' ? reply.text : reply.text.join('') };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${this.next}`,
        object: 'chat.completion',
        created: 1_700_000_000,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: 'toolCalls' in reply ? 'tool_calls' : 'stop' }],
      }),
    );
  }
}

/** The last message of a request, which must be a tool result: its call id and content. */
export function lastToolResult(request: ChatRequest): { tool_call_id: string; content: string } {
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== 'tool') throw new Error(`the last message is not a tool result: ${JSON.stringify(last)}`);
  return last;
}

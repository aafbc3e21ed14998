import { z } from 'zod';
import type { Capability, LogLevel } from './worker/protocol.js';

export type Role = 'system' | 'user' | 'assistant' | 'tool';
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}
export interface Message {
  role: Role;
  content: string;
  toolCalls: ToolCall[];
  toolCallId?: string | undefined;
}
export interface CompletionResponse {
  content: string;
  toolCalls?: ToolCall[];
  usage?: { inputTokens: number; outputTokens: number } | undefined;
}
export interface LlmRequest {
  /** The module asking. */
  module: string;
  model: string;
  messages: Message[];
  /** The guest's tools JSON, passed through as it gave it. */
  tools?: string | undefined;
  /**
   * Aborted once nobody waits for the answer: the plugin call that asked was cancelled or ran
   * past its limit, or its module was stopped, unloaded or had its grant revoked. A provider
   * should stop there (an HTTP request to a model, tokens spent); its answer is not read.
   */
  signal: AbortSignal;
}
/** The embedder's model access, for the `llm` capability. Throwing (or rejecting) becomes the guest's `err`. */
export interface LlmProvider {
  complete(request: LlmRequest): CompletionResponse | Promise<CompletionResponse>;
}

export interface SessionInfo {
  token: string;
  balanceTokens: bigint | number;
  reservedTokens: bigint | number;
  pricingModel: string;
}
/** The embedder's credit ledger, for the `billing` capability. */
export interface BillingProvider {
  /** `signal`: as `LlmRequest.signal`. */
  acquireSession(request: { module: string; estimatedTokens: bigint; signal: AbortSignal }): SessionInfo | Promise<SessionInfo>;
  /**
   * No signal: a usage report is the ledger's record of tokens already spent, not an answer
   * anyone waits for, so it is always made, even for a call cancelled meanwhile or an engine that
   * has ended.
   */
  reportUsage(request: { module: string; inputTokens: bigint; outputTokens: bigint }): void | Promise<void>;
}

export interface Providers {
  llm?: LlmProvider | undefined;
  billing?: BillingProvider | undefined;
}

/** `true`/`{ok: true}` admits; `false` or `{ok: false, reason}` refuses. */
export type Admission = boolean | { ok: true } | { ok: false; reason: string };

/**
 * The embedder's credit gate, consulted for every `invoke-tool` before the call waits for the
 * module's lock. A refusal never queues and never touches the guest.
 */
export interface CreditMeter {
  admit(module: string, call: { tool: string; callId: string; caller?: string | undefined }): Admission | Promise<Admission>;
}

/** Where the plugin runtime's log lines go (guest logging, stdout/stderr, load warnings). */
export interface PluginLogger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

export const stderrLogger: PluginLogger = {
  log(level, message, fields) {
    if (level === 'debug') return;
    const where = fields?.['module'] ? ` [${String(fields['module'])}]` : '';
    process.stderr.write(`chatty-gateway plugins${where} ${level}: ${message}\n`);
  },
};

/** Which capabilities an embedder grants a module (logging is always granted). */
export type GrantPolicy = (module: { name: string; manifest: import('./manifest.js').Manifest }) => Iterable<Capability>;

const u32 = z.number().int().min(0).max(0xffff_ffff);
const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
const completion = z.object({
  content: z.string(),
  toolCalls: z.array(toolCall).optional(),
  usage: z.object({ inputTokens: u32, outputTokens: u32 }).nullish(),
});
const s64 = z.union([z.bigint(), z.number().int()]).transform((v) => BigInt(v));
const session = z.object({ token: z.string(), balanceTokens: s64, reservedTokens: s64, pricingModel: z.string() });

/** Runs a bridged host call against the providers; the value is shaped for jco to lower. */
export async function runProvider(
  providers: Providers,
  module: string,
  capability: 'llm' | 'billing',
  method: string,
  args: unknown[],
  signal: AbortSignal,
): Promise<unknown> {
  if (capability === 'llm' && method === 'complete' && providers.llm) {
    const [model, messages, tools] = args as [string, Message[], string | undefined];
    const answer = completion.safeParse(await providers.llm.complete({ module, model, messages, tools, signal }));
    if (!answer.success) throw new Error('the provider returned an invalid completion');
    return { content: answer.data.content, toolCalls: answer.data.toolCalls ?? [], usage: answer.data.usage ?? undefined };
  }
  if (capability === 'billing' && providers.billing) {
    if (method === 'acquire-session') {
      const info = session.safeParse(await providers.billing.acquireSession({ module, estimatedTokens: args[0] as bigint, signal }));
      if (!info.success) throw new Error('the provider returned an invalid session');
      return info.data;
    }
    if (method === 'report-usage') {
      await providers.billing.reportUsage({ module, inputTokens: args[0] as bigint, outputTokens: args[1] as bigint });
      return undefined;
    }
  }
  throw new Error(`${method} is not available`);
}

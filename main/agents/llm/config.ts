import { z } from 'zod';
import { EXEC_TIMEOUT_MS } from '../scripted/exec.js';

/**
 * The LLM agent's settings, read from the environment the runner gives its worker:
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `CHATTY_LLM_BASE_URL` | an OpenAI-compatible API's base URL (the part before `/chat/completions`) | required |
 * | `CHATTY_LLM_MODEL` | the model name sent with each request | required |
 * | `CHATTY_LLM_API_KEY` | sent as `Authorization: Bearer …` (any value for a server that needs none) | required |
 * | `CHATTY_LLM_MAX_TURNS` | model requests per task before it is failed | 16 |
 * | `CHATTY_LLM_MAX_RETRIES` | the client library's retries of a failed request | 2 |
 * | `CHATTY_LLM_TIMEOUT_MS` | one model request's time limit | 120000 |
 * | `CHATTY_LLM_EXEC_TIMEOUT_MS` | one approved command's time limit | 600000 (10 min) |
 */
export interface LlmConfig {
  baseUrl: string;
  model: string;
  apiKey: string;
  maxTurns: number;
  maxRetries: number;
  timeoutMs: number;
  execTimeoutMs: number;
}

export const LLM_ENV = {
  baseUrl: 'CHATTY_LLM_BASE_URL',
  model: 'CHATTY_LLM_MODEL',
  apiKey: 'CHATTY_LLM_API_KEY',
  maxTurns: 'CHATTY_LLM_MAX_TURNS',
  maxRetries: 'CHATTY_LLM_MAX_RETRIES',
  timeoutMs: 'CHATTY_LLM_TIMEOUT_MS',
  execTimeoutMs: 'CHATTY_LLM_EXEC_TIMEOUT_MS',
} as const satisfies Record<keyof LlmConfig, string>;

export const DEFAULT_MAX_TURNS = 16;
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_TIMEOUT_MS = 120_000;
/** As the scripted agent's `exec`: long enough for a test suite. */
export const DEFAULT_EXEC_TIMEOUT_MS = EXEC_TIMEOUT_MS;

/** A setting that is missing or malformed; its message names the variable. */
export class LlmConfigError extends Error {
  override readonly name = 'LlmConfigError';
}

const required = (name: string) => z.string({ error: `${name} is not set` }).trim().min(1, `${name} is empty`);
const count = (name: string, fallback: number, min: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .pipe(z.number().int().min(min, `${name} must be at least ${min}`).max(1_000_000_000, `${name} is too large`))
    .optional()
    .transform((value) => value ?? fallback);

const LlmEnv = z.object({
  [LLM_ENV.baseUrl]: required(LLM_ENV.baseUrl).pipe(
    z.url({ protocol: /^https?$/, error: `${LLM_ENV.baseUrl} must be an http:// or https:// URL` }),
  ),
  [LLM_ENV.model]: required(LLM_ENV.model),
  [LLM_ENV.apiKey]: required(LLM_ENV.apiKey),
  [LLM_ENV.maxTurns]: count(LLM_ENV.maxTurns, DEFAULT_MAX_TURNS, 1),
  [LLM_ENV.maxRetries]: count(LLM_ENV.maxRetries, DEFAULT_MAX_RETRIES, 0),
  [LLM_ENV.timeoutMs]: count(LLM_ENV.timeoutMs, DEFAULT_TIMEOUT_MS, 1),
  [LLM_ENV.execTimeoutMs]: count(LLM_ENV.execTimeoutMs, DEFAULT_EXEC_TIMEOUT_MS, 1),
});

/** The settings from `env`; throws `LlmConfigError` naming every variable at fault. */
export function readLlmConfig(env: NodeJS.ProcessEnv = process.env): LlmConfig {
  const parsed = LlmEnv.safeParse(env);
  if (!parsed.success) {
    const problems = [...new Set(parsed.error.issues.map((issue) => issue.message))];
    throw new LlmConfigError(`the LLM agent is not configured: ${problems.join('; ')}`);
  }
  const vars = parsed.data;
  return {
    baseUrl: vars[LLM_ENV.baseUrl],
    model: vars[LLM_ENV.model],
    apiKey: vars[LLM_ENV.apiKey],
    maxTurns: vars[LLM_ENV.maxTurns],
    maxRetries: vars[LLM_ENV.maxRetries],
    timeoutMs: vars[LLM_ENV.timeoutMs],
    execTimeoutMs: vars[LLM_ENV.execTimeoutMs],
  };
}

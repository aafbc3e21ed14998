import { z } from 'zod';

/** How long connecting to the runner may take before the call is a 502. */
export const RUNNER_CONNECT_TIMEOUT_MS = 10_000;
/**
 * How long the runner may take to send its answer's first byte (its status line and headers). A
 * blocking `message/send` is answered only when its task ends: a runner whose tasks run longer
 * needs streaming or a larger value.
 */
export const RUNNER_FIRST_BYTE_TIMEOUT_MS = 120_000;
/**
 * How long the runner may then go silent: no byte of its answer (an event, a keep-alive comment,
 * a chunk of JSON) for this long ends the forward and the upstream request. Generous, since an
 * agent may rightly think for minutes between events.
 */
export const RUNNER_IDLE_TIMEOUT_MS = 300_000;

/** The remote runner modules with `execution_mode = "remote"`/`"remote_only"` are forwarded to. */
export const RemoteRunnerOptions = z.strictObject({
  /** Its base URL: a module `m` is forwarded to `<url>/a2a/m`. */
  url: z
    .string()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
      } catch {
        return false;
      }
    }, { message: 'must be an http: or https: URL without credentials, query or fragment (the token goes in remoteRunner.token)' }),
  /** Sent upstream as `Authorization: Bearer <token>` (never the gateway's own launch token). */
  token: z.string().min(1).optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
  firstByteTimeoutMs: z.number().int().positive().optional(),
  idleTimeoutMs: z.number().int().positive().optional(),
});
export type RemoteRunnerOptions = z.input<typeof RemoteRunnerOptions>;

/** What the forward works with, once checked and defaulted. */
export interface RemoteRunnerSettings {
  /** The base URL without a trailing slash. */
  base: string;
  token: string | undefined;
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Checks the embedder's `remoteRunner` option; throws naming what is wrong. */
export function remoteRunnerSettings(options: RemoteRunnerOptions): RemoteRunnerSettings {
  const parsed = RemoteRunnerOptions.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? `remoteRunner.${issue.path.join('.')}` : 'remoteRunner';
    throw new Error(`${where}: ${issue?.message ?? 'invalid'}`);
  }
  const o = parsed.data;
  return {
    base: o.url.replace(/\/+$/, ''),
    token: o.token,
    connectTimeoutMs: o.connectTimeoutMs ?? RUNNER_CONNECT_TIMEOUT_MS,
    firstByteTimeoutMs: o.firstByteTimeoutMs ?? RUNNER_FIRST_BYTE_TIMEOUT_MS,
    idleTimeoutMs: o.idleTimeoutMs ?? RUNNER_IDLE_TIMEOUT_MS,
  };
}

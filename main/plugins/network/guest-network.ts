import { AllowList } from './allow-list.js';
import type { ErrorCode, NetworkAnswer, NetworkRequest } from './exchange.js';
import { FetchThread } from './fetch-thread.js';
import { requestLine } from './request-log.js';
import { checkTarget, targetLabel } from './run-request.js';
import type { WasiHttpHost } from './wasi-http.js';

/**
 * One line of the module log about a request, and whether the request was sent: handed to the
 * fetch thread, so it may have reached `target` (an allowed host), or refused before anything
 * left (not on the allow-list, a body over its cap). The worker budgets the two apart
 * (`worker/request-lines.ts`): a refused request costs the guest nothing, and its lines must not
 * crowd out the line of one that went out.
 */
export interface RequestLogLine {
  level: 'info' | 'warn';
  line: string;
  sent: boolean;
  target: string;
}

export interface NetworkLimits {
  /** Response body bytes one guest call may bring in, over all its requests. */
  maxBodyBytesPerCall: number;
  /** The most the guest may send as one request body. */
  maxRequestBodyBytes: number;
  /** One request's clock (the call's own deadline ends the worker, and this thread, sooner). */
  timeoutMs: number;
}

/**
 * The guest worker's side of a plugin's network: the allow-list checked before anything is sent,
 * the call's body budget, the module log's line for each request, and the fetch thread that
 * performs what passes. `allow` null: the plugin has no network, every request is refused.
 */
export class GuestNetwork implements WasiHttpHost {
  private readonly allow: AllowList | null;
  private readonly thread: FetchThread | null;
  private left: number;
  /** Why the latest request was refused, until the guest's fetch wrapper reads it (`refusal-key.ts`). */
  private refusal: string | undefined;

  constructor(
    allow: readonly string[] | null,
    private readonly limits: NetworkLimits,
    private readonly log: (entry: RequestLogLine) => void,
  ) {
    this.allow = allow === null ? null : new AllowList(allow);
    this.thread = allow === null ? null : new FetchThread(allow);
    this.left = limits.maxBodyBytesPerCall;
  }

  get maxRequestBodyBytes(): number {
    return this.limits.maxRequestBodyBytes;
  }

  /** A new guest call: its budget starts full. */
  startCall(): void {
    this.left = this.limits.maxBodyBytesPerCall;
    this.refusal = undefined;
  }

  /** Why the latest request failed, once. */
  takeRefusal(): string | undefined {
    const why = this.refusal;
    this.refusal = undefined;
    return why;
  }

  refuse(method: string, url: string): { error: ErrorCode; message: string } | null {
    const target = checkTarget(this.allow, method, url);
    if (!('ok' in target)) return null;
    this.refused(method, targetLabel(url), target.message, false);
    return { error: target.error, message: target.message };
  }

  refuseBody(method: string, url: string, bytes: number): ErrorCode {
    const why = `the request body (${bytes} bytes) is over the ${this.limits.maxRequestBodyBytes}-byte limit`;
    this.refused(method, targetLabel(url), `network: ${why}`, false);
    return { tag: 'HTTP-request-body-size', val: BigInt(bytes) };
  }

  send(request: NetworkRequest): NetworkAnswer {
    if (!this.thread) return { ok: false, error: { tag: 'HTTP-request-denied' }, message: 'network: this plugin has no network access' };
    const answer = this.thread.request(request, this.left, this.limits.timeoutMs);
    for (const hop of answer.hops) {
      this.left -= hop.bytes;
      this.log({ level: 'info', line: requestLine(hop.method, hop.target, { status: hop.status, bytes: hop.bytes }), sent: true, target: hop.target });
    }
    if (answer.ok) {
      this.left -= answer.body.length;
      this.log({ level: 'info', line: requestLine(answer.method, answer.target, { status: answer.status, bytes: answer.body.length }), sent: true, target: answer.target });
    } else {
      this.refused(answer.method, answer.target, answer.message, true); // failed on its way: it may have gone out
    }
    return answer;
  }

  /** A request refused or failed: the module log's line, and the reason kept for the guest's fetch wrapper. */
  private refused(method: string, target: string, message: string, sent: boolean): void {
    this.log({ level: 'warn', line: requestLine(method, target, { refused: message.replace(/^network: /, '') }), sent, target });
    this.refusal = message;
  }
}

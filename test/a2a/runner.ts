import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part, type Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, jsonRpcHandler } from '@a2a-js/sdk/server/express';

/** One request the runner received, as it arrived. */
export interface SeenRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  /** The JSON-RPC method in the body. */
  method: string | undefined;
  body: string;
  /** Resolves when the request's connection closed before the runner finished answering. */
  aborted: Promise<void>;
  wasAborted: () => boolean;
}

/** Lets a test hold each step of a `steps N` task until it says so (no sleeps). */
class Gate {
  private credits = 0;
  private waiters: (() => void)[] = [];
  wait(): Promise<void> {
    if (this.credits > 0) {
      this.credits--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  release(): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter();
    else this.credits++;
  }
}

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function textOf(message: Message): string {
  return message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/**
 * The test's agent, in the SDK's terms. The user's text says what to do:
 * `steps N` publishes N artifact chunks and then completes, each only after the test releases it; `hang` works until
 * cancelled; anything else is echoed back (`echo: <text>`) and completes.
 */
class TestExecutor implements AgentExecutor {
  constructor(private readonly runner: A2aRunner) {}

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const said = textOf(ctx.userMessage);
    const { taskId, contextId } = ctx;
    this.runner.contexts.set(taskId, contextId);
    const now = (): string => new Date().toISOString();
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() }, metadata: undefined }));
    const artifact = (value: string, append: boolean, lastChunk: boolean): void =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: 'answer', name: 'answer', description: '', parts: [text(value)], metadata: undefined, extensions: [] },
          append,
          lastChunk,
          metadata: undefined,
        }),
      );
    const steps = /^steps (\d+)$/.exec(said);
    if (steps) {
      const n = Number(steps[1]);
      for (let i = 1; i <= n; i++) {
        await this.runner.gate.wait();
        artifact(`step ${i}`, i > 1, i === n);
      }
      await this.runner.gate.wait(); // and the end waits too
    } else if (said === 'hang') {
      await new Promise<void>((resolve) => this.runner.hanging.set(taskId, resolve));
      return; // cancelTask has published the end
    } else {
      artifact(`echo: ${said}`, false, true);
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() }, metadata: undefined }));
    this.runner.finished.add(taskId);
    bus.finished();
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: this.runner.contexts.get(taskId) ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() },
        metadata: undefined,
      }),
    );
    bus.finished();
    this.runner.hanging.get(taskId)?.();
    this.runner.cancelled.add(taskId);
  }
}

export interface A2aRunnerOptions {
  /** The bearer it requires (401 without it). */
  token?: string;
}

/**
 * A real A2A agent on 127.0.0.1: `@a2a-js/sdk`'s `DefaultRequestHandler` behind the SDK's own
 * express `jsonRpcHandler` (with its 0.3 compatibility layer, chosen by `A2A-Version`, 0.3 when
 * absent) at `POST /a2a/<name>`. In front of it, the test's own two steps: every request is
 * recorded as it arrived, and one without the runner's bearer (when it has one) gets a 401.
 */
export class A2aRunner {
  readonly requests: SeenRequest[] = [];
  readonly gate = new Gate();
  readonly hanging = new Map<string, () => void>();
  readonly finished = new Set<string>();
  readonly cancelled = new Set<string>();
  readonly contexts = new Map<string, string>();
  readonly store = new InMemoryTaskStore();
  private readonly waiting: ((r: SeenRequest) => void)[] = [];
  private server: Server | undefined;
  url = '';

  constructor(private readonly options: A2aRunnerOptions = {}) {}

  async start(): Promise<this> {
    const card: AgentCard = {
      name: 'test-runner',
      description: 'the tests remote runner',
      supportedInterfaces: [
        { url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
      ],
      provider: undefined,
      version: '1.0.0',
      capabilities: { streaming: true, pushNotifications: false, extensions: [] },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
      signatures: [],
    };
    const app = express();
    app.post('/a2a/:name', (req, res, next) => this.record(req, res, next));
    app.use('/a2a/:name', jsonRpcHandler({
      requestHandler: new DefaultRequestHandler(card, this.store, new TestExecutor(this)),
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }));
    app.use((_req, res) => {
      res.status(404).json({ error: 'not found' });
    });
    const server = app.listen(0, '127.0.0.1');
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** The next request to arrive after this call (ask before sending it). */
  nextRequest(): Promise<SeenRequest> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /**
   * Reads the body as it came and records the request; the SDK's JSON parser then finds the body
   * read (it skips a request already read) and takes the value parsed here (`undefined` for a
   * body that is not JSON, which the SDK answers as an invalid request).
   */
  private record(req: express.Request, res: express.Response, next: express.NextFunction): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
      let abortedFlag = false;
      let markAborted!: () => void;
      const aborted = new Promise<void>((resolve) => (markAborted = resolve));
      res.once('close', () => {
        if (!res.writableFinished) {
          abortedFlag = true;
          markAborted();
        }
      });
      const method = (parsed as { method?: unknown } | undefined)?.method;
      const seen: SeenRequest = {
        path: req.originalUrl,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        method: typeof method === 'string' ? method : undefined,
        body,
        aborted,
        wasAborted: () => abortedFlag,
      };
      this.requests.push(seen);
      this.waiting.shift()?.(seen);
      if (this.options.token !== undefined && req.headers.authorization !== `Bearer ${this.options.token}`) {
        res.status(401).json({ error: 'unauthorized' });
        return;
      }
      req.body = parsed;
      next();
    });
  }
}

/** A user message in the SDK's 1.0 shape. */
export function userMessage(said: string, taskId = ''): Message {
  return { messageId: randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts: [text(said)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

import { chmodSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { claimLogFile } from './access/log-file.js';
import { DEFAULT_CONNECTION_LIMITS, limitedServer, type ConnectionLimits } from './connection-limits.js';
import { join } from 'node:path';
import type Koa from 'koa';
import { EDGE_LOG_FILE, SOCKET_FILE, TOKEN_FILE, defaultRuntimeDir, ensureRuntimeDir, newLaunchToken, readTokenFile, writeTokenFile } from './access/index.js';
import { bindOwnSocket, bindRefusal, refuseWindows } from '../owner-only/index.js';
import { buildGatewayApp } from './app.js';
import type { GatewayState } from './context.js';
import { EdgeLog, type EdgeListener } from './edge/edge-log.js';
import { MAX_REQUEST_BYTES } from './guards/body-limit.js';
import { MAX_UNSENT_BYTES, UnsentBytes } from './unsent/unsent-bytes.js';
import { ReadingBodies } from './reading/reading-bodies.js';
import { SSE_IDLE_MS, SSE_KEEP_ALIVE_MS, SseSessions, TOOLS_LIST_CHANGED, mcpSurface, type SseSessionListener } from './mcp/index.js';
import type { ModuleDirectory } from './modules.js';
import { RemoteRunner, a2aSurface, remoteRunnerSettings, type RemoteModuleDirectory, type RemoteRunnerOptions } from './a2a/index.js';
import { APPROVALS_LOG_FILE, Broker, RootTransport, gatewayApprovals, type AgentCard, type BrokerOptions, type GatewayApprovals } from '../broker/index.js';
import type { Runner } from '../broker/runners/runner.js';
import type { OpenedConnection } from '../fabric/admission/index.js';

export interface ProtocolGatewayOptions {
  /** Where `gateway.sock`, `gateway.token` and `edge.log` live (default: `defaultRuntimeDir()`). */
  runtimeDir?: string;
  /** Body cap (default 10 MiB, `MAX_REQUEST_BYTES`); tests lower it. */
  maxRequestBytes?: number;
  /** Called with errors no client should see (a handler's crash). */
  onError?: (err: unknown) => void;
  /** Interval of the keep-alive comment on legacy MCP SSE streams (default 15 s); tests shorten it. */
  sseKeepAliveMs?: number;
  /** How long a legacy SSE session's client may send nothing before its session may be closed to let a new one in when all 64 are open (default 5 min, `SSE_IDLE_MS`); tests shorten it. */
  sseIdleMs?: number;
  /** Slow and idle clients: headers within 10 s, a whole request within 60 s, 512 connections at once, answers taken at 64 KiB every 30 s (`DEFAULT_CONNECTION_LIMITS`); tests lower them. */
  connectionLimits?: Partial<ConnectionLimits>;
  /**
   * The broker's settings: the root's own spawn context (`root.workspaceRoot`, `root.baseBranch`,
   * `root.roster`, default every published agent), each agent's `verification` and `endpoint`
   * (`agents`), the cancel grace period, how worker connections are served, the fan-out caps
   * (`maxWorkers`, default 16; `maxWorkersPerTask`, default 8) and what is kept of a task's text
   * (`maxTaskTextBytes`, default 4 MiB). Passed to the broker as given.
   */
  broker?: BrokerOptions;
  /**
   * The remote runner that modules with `execution_mode = "remote"`/`"remote_only"` are forwarded
   * to (`POST /a2a/{name}` → `<url>/a2a/<name>`), with its own bearer `token`. Without it such a
   * module answers 503. `connectTimeoutMs`/`firstByteTimeoutMs` bound a runner that does not answer,
   * `idleTimeoutMs` one that stops sending in the middle of its answer.
   */
  remoteRunner?: RemoteRunnerOptions;
  /**
   * Remembered approvals: `file` keeps the "always" rules (JSON, 0600; read at construction, a
   * malformed file throws `RulesFileError` naming it and is never overwritten). Without it they
   * last as long as the gateway. See docs/approvals.md.
   */
  approvals?: { file?: string };
}

export interface StartedGateway {
  socketPath: string;
  tokenPath: string;
}

/**
 * The gateway: HTTP on an owner-only Unix socket with a per-launch bearer token. No TCP listener.
 * `buildRouter()` gives the guarded Koa app to an embedder who wants another listener.
 */
export class ProtocolGateway {
  readonly edgeLog = new EdgeLog();
  private readonly launchToken = newLaunchToken();
  private runtimeDir: string;
  private server: Server | undefined;
  private started: StartedGateway | undefined;
  private stopping: Promise<void> | undefined;
  private readonly sseSessions: SseSessions;
  /** Every response's bytes written and not yet taken by its client (answers and SSE streams alike), under one cap. */
  private readonly unsent: UnsentBytes;
  /** Every request body's bytes while it comes in, under one cap (each body under its own 10 MiB too). */
  private readonly readingBodies = new ReadingBodies();
  /** Stops telling SSE sessions of module changes (at `stop`). */
  private readonly unwatchModules: () => void;
  /** Routes work between the root, long-lived participants and virtual agents. */
  readonly broker: Broker;
  private root: RootTransport | undefined;
  /** The remembered approval rules (list, add, revoke) and every decision as it is made (`approvals.log`). */
  readonly approvals: GatewayApprovals;
  /** The forward to the remote runner, when one is configured. */
  private readonly remoteRunner: RemoteRunner | undefined;

  constructor(
    readonly registry: ModuleDirectory & RemoteModuleDirectory,
    private readonly options: ProtocolGatewayOptions = {},
  ) {
    this.runtimeDir = options.runtimeDir ?? defaultRuntimeDir();
    const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.connectionLimits };
    this.unsent = new UnsentBytes(MAX_UNSENT_BYTES, { windowMs: limits.answerDrainWindowMs, minBytes: limits.answerDrainMinBytes });
    this.sseSessions = new SseSessions(options.sseKeepAliveMs ?? SSE_KEEP_ALIVE_MS, options.sseIdleMs ?? SSE_IDLE_MS);
    // A module reloaded or back online may have other tools: its SSE sessions are told at once.
    this.unwatchModules = registry.onChange?.(({ name, change }) => {
      if (change === 'served' || change === 'reloaded') this.sseSessions.broadcast(name, TOOLS_LIST_CHANGED);
    }) ?? (() => {});
    this.broker = new Broker(options.broker);
    if (options.approvals?.file !== undefined) this.broker.human.rules.persistTo(options.approvals.file);
    // What the registry grants from is the gateway's configuration too: an agent writing it is tagged `gateway-config`.
    this.broker.human.protectConfig(() => registry.configFiles?.() ?? []);
    this.approvals = gatewayApprovals(this.broker.human.rules, this.broker.human.audit);
    this.remoteRunner = options.remoteRunner ? new RemoteRunner(remoteRunnerSettings(options.remoteRunner), this.readingBodies) : undefined;
  }

  /** Publishes a virtual agent: each task addressed to `name` starts one worker through `runner`. Chainable, before or after `start()`. */
  withVirtualAgent(name: string, runner: Runner, card?: Partial<AgentCard>): this {
    this.broker.addVirtualAgent(name, runner, card);
    return this;
  }

  /** Spawns a long-lived worker on fd 3 through the broker, registered as `<spec>-<n>` and reachable by that name. */
  openParticipant(spec: string, command: string, args: readonly string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): Promise<OpenedConnection> {
    return this.broker.openParticipant(spec, command, args, options);
  }

  /** The in-process root: invoke agents, list them, post, answer approvals and questions. */
  transport(): RootTransport {
    this.root ??= new RootTransport(this.broker);
    return this.root;
  }

  withRuntimeDir(dir: string): this {
    if (this.server) throw new Error('withRuntimeDir: the gateway has already started');
    this.runtimeDir = dir;
    return this;
  }

  /** Where the gateway listens once `start()` has resolved (what it returned), else undefined. */
  get listening(): StartedGateway | undefined {
    return this.started;
  }

  /** The per-launch token (64 hex characters). */
  token(): string {
    return this.launchToken;
  }

  /** Edge-log rows as they happen; returns the unsubscribe function. */
  onEdge(listener: EdgeListener): () => void {
    return this.edgeLog.subscribe(listener);
  }

  /** Legacy MCP SSE streams open right now. */
  get openSseSessions(): number {
    return this.sseSessions.size;
  }

  /** Bytes written to legacy MCP SSE streams that their clients have not read yet, all streams together. */
  get sseBacklogBytes(): number {
    return this.sseSessions.backlogBytes;
  }

  /** Bytes of every response (answers, SSE streams, refusals) written and not yet read by its client, all connections together. */
  get unsentBytes(): number {
    return this.unsent.bytes;
  }

  /** Bytes of the request bodies still coming in, all connections together (`MAX_READING_BODY_BYTES`). */
  get readingBodyBytes(): number {
    return this.readingBodies.bytes;
  }

  /** Legacy MCP SSE sessions as they open and close; returns the unsubscribe function. */
  onSseSession(listener: SseSessionListener): () => void {
    return this.sseSessions.subscribe(listener);
  }

  buildRouter(): Koa<GatewayState> {
    return this.buildApp(true);
  }

  /** The app; `followResponses` mounts the ledger's middleware, which a server made with `unsent.Response` does without (one Koa layer less a request). */
  private buildApp(followResponses: boolean): Koa<GatewayState> {
    const onError = this.options.onError ?? ((err) => console.error('chatty-gateway: handler failed', err));
    return buildGatewayApp({
      token: () => this.launchToken,
      edgeLog: this.edgeLog,
      modules: this.registry,
      remoteRunner: this.remoteRunner?.shownUrl,
      maxRequestBytes: this.options.maxRequestBytes ?? MAX_REQUEST_BYTES,
      readingBodies: this.readingBodies,
      unsent: followResponses ? this.unsent : undefined,
      onError,
      handlers: [
        mcpSurface({ modules: this.registry, sessions: this.sseSessions, onError }),
        a2aSurface({ modules: this.registry, roles: this.broker, runner: this.remoteRunner }),
      ],
    });
  }

  async start(): Promise<StartedGateway> {
    if (this.started) return this.started;
    refuseWindows();
    const dir = ensureRuntimeDir(this.runtimeDir, { socketFile: SOCKET_FILE });
    const socketPath = join(dir, SOCKET_FILE);
    const tokenPath = join(dir, TOKEN_FILE);
    const server = limitedServer(this.options.connectionLimits, this.buildApp(false).callback(), this.unsent.Response);
    let listening = false;
    try {
      // A leftover cleared and the socket bound under gateway.sock.lock: one starter at a time.
      await bindOwnSocket(socketPath, server).catch((err: NodeJS.ErrnoException) => {
        // A bind lost to a gateway started at the same moment, refused saying so.
        throw err.code === 'EADDRINUSE' ? bindRefusal(socketPath, 'another gateway bound it meanwhile (started at the same time in this runtime directory)') : err;
      });
      listening = true;
      chmodSync(socketPath, 0o600);
      // Only now, holding the socket, is the directory ours: a gateway started at the same moment
      // (both found the socket free) fails its bind above without having touched the token file,
      // which before it had replaced with its own and then removed on its way out.
      writeTokenFile(tokenPath, this.launchToken);
      for (const log of [EDGE_LOG_FILE, APPROVALS_LOG_FILE]) claimLogFile(join(dir, log));
      this.edgeLog.writeTo(join(dir, EDGE_LOG_FILE));
      this.broker.human.audit.writeTo(join(dir, APPROVALS_LOG_FILE));
    } catch (err) {
      // Whatever failed, nothing of this launch is left behind: the token first, while our
      // socket (when bound) still keeps a successor out.
      removeOwnToken(tokenPath, this.launchToken);
      if (listening) await closeServer(server); // Node unlinks the socket
      throw err;
    }
    this.server = server;
    this.started = { socketPath, tokenPath };
    return this.started;
  }

  /**
   * Stops serving and removes the socket and the token, once; later calls are no-ops. Every task
   * and call in flight is cancelled and every child the broker started is reaped before it resolves.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  /** The socket and the token go whatever fails before them; the first failure is then thrown. */
  private async shutdown(): Promise<void> {
    this.unwatchModules();
    const server = this.server;
    const started = this.started;
    if (!server || !started) {
      await this.broker.stop();
      await this.remoteRunner?.close();
      return;
    }
    let released = false;
    try {
      await this.broker.stop();
      this.sseSessions.endAll();
      await releaseDirectory(server, started, this.launchToken);
      released = true;
      await this.remoteRunner?.close();
      await this.edgeLog.stopWriting();
      this.broker.human.audit.stopWriting();
    } finally {
      if (!released) await releaseDirectory(server, started, this.launchToken);
    }
  }

  /**
   * For a process about to exit without waiting for `stop()` (a second Ctrl-C): synchronously
   * removes what this launch still holds. While our server listens, the token (when still ours)
   * and then the socket, both ours since no successor can bind beside a live socket; once the
   * server has closed, nothing: the token went before it closed, and whatever is there since is a
   * successor's.
   */
  leaveAtOnce(): void {
    const server = this.server;
    const started = this.started;
    if (!server?.listening || !started) return;
    removeOwnToken(started.tokenPath, this.launchToken);
    removeQuietly(started.socketPath);
  }
}

/**
 * The token goes first, while our socket is still bound: no successor can have bound beside it, so
 * none has written a token that the check and the removal could race with. Then the server closes
 * (Node unlinks the socket) and from there the directory is a successor's to take.
 */
async function releaseDirectory(server: Server, started: StartedGateway, token: string): Promise<void> {
  removeOwnToken(started.tokenPath, token);
  await closeServer(server);
}

/**
 * The socket is never removed by path: Node unlinks it when the server closes, and a file there
 * afterwards is a successor's (ext4 hands a freed inode number straight to the next file, so an
 * identity recorded at start cannot tell). The token is removed only while the file still holds
 * this launch's token (256 random bits: no successor's).
 */
function removeOwnToken(path: string, token: string): void {
  if (holdsToken(path, token)) removeQuietly(path);
}

/**
 * A token file (the one reader, `readTokenFile`: never a link or a FIFO, which a read would follow
 * or block on; a stat of the path, then a read of the path, let a fifo put there in between hold
 * the stop for ever) whose token is `token`. Gone already, or not a file we can read: not ours to
 * remove.
 */
function holdsToken(path: string, token: string): boolean {
  const read = readTokenFile(path);
  return read.ok && read.token === token;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Open streams (SSE) would hold close() forever.
    server.closeAllConnections();
  });
}

/** Removal on the way out: one that fails must not keep the other from happening, nor hide the first error. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Nothing more to do about it; the caller is already on its way out.
  }
}

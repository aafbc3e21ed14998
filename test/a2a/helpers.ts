import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import type { EdgeRow, ProtocolGatewayOptions } from '../../main/gateway/index.js';
import { ModuleRegistry } from '../../main/plugins/index.js';
import { startGateway, tempDir, type RunningGateway } from '../helpers/gateway.js';
import { unixRequest, type HttpResponse } from '../helpers/http.js';
import { socketFetch } from '../mcp/helpers.js';
import { TEST_CACHE_DIR, buildFixture, fixtureManifest, writeModuleDir } from '../helpers/wasm-fixtures.js';

/** A module.toml for a module the gateway forwards: no wasm. */
export function remoteManifest(name: string, mode: 'remote' | 'remote_only' = 'remote', description = `the remote agent ${name}`): string {
  return `[module]\nname = "${name}"\nversion = "2.1.0"\ndescription = "${description}"\nexecution_mode = "${mode}"\n`;
}

export interface A2aGateway extends RunningGateway {
  registry: ModuleRegistry;
  /** Every edge-log row, as the gateway emits it. */
  rows: EdgeRow[];
  /** A fetch over the gateway's socket that carries the gateway's bearer token. */
  fetch: typeof fetch;
  /** One raw request over the socket with the bearer token (plus `headers`). */
  request(method: string, path: string, body?: string | object, headers?: Record<string, string>): Promise<HttpResponse>;
  /** `@a2a-js/sdk`'s client for module `name`: 1.0 from its agent-card.json, or 0.3-compatible from its agent.json. */
  client(name: string, dialect: '1.0' | '0.3'): Promise<Client>;
}

export interface A2aGatewaySetup {
  /** Modules with `execution_mode = "remote"` (a `remote_only` one when the name ends in `-only`). */
  remote?: readonly string[];
  /** Real local plugins (the echo component) served over MCP. */
  local?: readonly string[];
  options?: ProtocolGatewayOptions;
}

/** A real gateway on a real socket, its registry scanning real module directories. */
export async function startA2aGateway(setup: A2aGatewaySetup): Promise<A2aGateway> {
  const root = tempDir('chatty-a2a-');
  const modulesDir = join(root.path, 'modules');
  mkdirSync(modulesDir, { recursive: true });
  for (const name of setup.remote ?? []) writeModuleDir(modulesDir, name, { manifest: remoteManifest(name, name.endsWith('-only') ? 'remote_only' : 'remote') });
  for (const name of setup.local ?? []) writeModuleDir(modulesDir, name, { manifest: fixtureManifest(name), component: await buildFixture('echo') });
  const registry = new ModuleRegistry({ cacheDir: TEST_CACHE_DIR, logger: { log: () => {} } });
  let gw: RunningGateway;
  try {
    const report = await registry.scanDirectory(modulesDir);
    if (report.failed.length > 0) throw new Error(`modules failed to load: ${JSON.stringify(report.failed)}`);
    gw = await startGateway(registry, setup.options ?? {});
  } catch (err) {
    await registry.close();
    root.remove();
    throw err;
  }
  const rows: EdgeRow[] = [];
  gw.gateway.onEdge((row) => rows.push(row));
  const over = socketFetch(gw.socketPath);
  const token = gw.gateway.token();
  const authed = ((input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return over.fetch(input, { ...init, headers });
  }) as typeof fetch;
  return {
    ...gw,
    registry,
    rows,
    fetch: authed,
    request: (method, path, body, headers = {}) =>
      unixRequest(gw.socketPath, {
        method,
        path,
        headers: { ...gw.auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      }),
    client: (name, dialect) => {
      const legacyCompat = dialect === '0.3' ? { enabled: true } : undefined;
      const factory = new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl: authed, ...(legacyCompat ? { legacyCompat } : {}) })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed, ...(legacyCompat ? { legacyCompat } : {}) }),
      });
      const base = `http://localhost/a2a/${name}/`;
      return dialect === '0.3' ? factory.createFromUrl(base, '.well-known/agent.json') : factory.createFromUrl(base);
    },
    close: async () => {
      await over.close();
      await gw.close();
      await registry.close();
      root.remove();
    },
  };
}

/** The rows for `path`, once the request has been answered. */
export function rowsFor(rows: readonly EdgeRow[], path: string): EdgeRow[] {
  return rows.filter((r) => r.path === path);
}

/** A loopback HTTP server answering every request with `answer` (or never, with `null`). */
export async function fakeUpstream(answer: ((req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) | null): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (answer) answer(req, res);
    else req.resume(); // reads the request, never answers
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A loopback port nothing listens on: bound, then released. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * A loopback TCP port whose listener never accepts, with its accept queue full: a connection to it
 * gets no answer to its SYN (the kernel drops a SYN while the queue is full), so connecting hangs.
 * The listener lives in a worker thread whose event loop is blocked in `Atomics.wait`, so nothing
 * ever takes a connection off the queue; the queue (backlog 1: two connections) is filled first.
 */
export async function neverAccepting(): Promise<{ url: string; close: () => Promise<void> }> {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const server = require('node:net').createServer();
     server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
       parentPort.postMessage(server.address().port);
       Atomics.wait(workerData, 0, 0);
       server.close();
       parentPort.close();
     });`,
    { eval: true, workerData: flag },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const queued: Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const socket = connect(port, '127.0.0.1');
    queued.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
  }
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of queued) socket.destroy();
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
      await new Promise((resolve) => worker.once('exit', resolve));
    },
  };
}

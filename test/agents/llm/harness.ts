/**
 * One real gateway for the LLM agent's tests: the echo plugin fixture served over MCP on a real
 * Unix socket, its broker, and LLM agents published as virtual agents whose workers are the real
 * `chatty-gateway worker --agent llm` (`defaultWorker('llm')`, on fd 3 through `LocalRunner`), each
 * in a fresh temporary workspace, told
 * where the gateway is (`CHATTY_GATEWAY_SOCKET`, `CHATTY_GATEWAY_TOKEN_FILE`) and where the
 * stand-in model is (`CHATTY_LLM_*`).
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayWorkerEnv } from '../../../main/agents/llm/index.js';
import { defaultWorker } from '../../../main/agents/worker-command.js';
import type { BrokerOptions, RootTransport, Workspace, WorkspaceFactory } from '../../../main/broker/index.js';
import { LocalRunner } from '../../../main/broker/runners/index.js';
import { startMcpGateway, type McpGateway } from '../../mcp/helpers.js';

const TSX = import.meta.resolve('tsx');
const AGENT = fileURLToPath(new URL('../../broker/children/agent.ts', import.meta.url));

/** A fresh directory per worker, kept until the harness closes so a test can look inside. */
class TempWorkspaces implements WorkspaceFactory {
  readonly dirs = new Map<string, string>();
  constructor(private readonly root: string) {}
  async create(node: { name: string }, spawnContext: Workspace['spawnContext']): Promise<Workspace> {
    const dir = realpathSync(mkdtempSync(join(this.root, `${node.name}-`)));
    this.dirs.set(node.name, dir);
    return { dir, spawnContext, release: async () => {} };
  }
}

export interface LlmHarness {
  gw: McpGateway;
  root: RootTransport;
  /** Publishes an LLM agent talking to the model at `baseUrl`, with `env` over the defaults. */
  addLlmAgent(name: string, baseUrl: string, env?: Record<string, string | undefined>): void;
  /** Publishes the broker tests' scriptable agent (JSON plans) under `name`. */
  addPlanAgent(name: string): void;
  /** The workspace the worker admitted as `node` ran in. */
  workspaceOf(node: string): string;
  close(): Promise<void>;
}

export const API_KEY = 'sk-stand-in-key';
export const MODEL = 'stand-in-model';

export async function startLlmHarness(broker: Partial<BrokerOptions> = {}): Promise<LlmHarness> {
  const gw = await startMcpGateway(['echo'], { broker: { cancelGraceMs: 1_000, log: () => {}, ...broker } });
  const scratch = mkdtempSync(join(tmpdir(), 'chatty-llm-ws-'));
  const workspaces = new TempWorkspaces(scratch);
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(base)) if (name.startsWith('CHATTY_LLM_') || name.startsWith('CHATTY_GATEWAY_') || name.startsWith('OPENAI_')) delete base[name];
  return {
    gw,
    root: gw.gateway.transport(),
    addLlmAgent(name, baseUrl, env = {}) {
      const workerEnv: NodeJS.ProcessEnv = {
        ...base,
        ...gatewayWorkerEnv(gw),
        CHATTY_LLM_BASE_URL: baseUrl,
        CHATTY_LLM_MODEL: MODEL,
        CHATTY_LLM_API_KEY: API_KEY,
        CHATTY_LLM_MAX_RETRIES: '0',
      };
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete workerEnv[key];
        else workerEnv[key] = value;
      }
      const runner = new LocalRunner({ ...defaultWorker('llm'), env: workerEnv, workspaceFactory: workspaces, reapGraceMs: 1_000 });
      gw.gateway.withVirtualAgent(name, runner, { description: `an LLM agent (${name})` });
    },
    addPlanAgent(name) {
      const runner = new LocalRunner({ command: process.execPath, args: ['--import', TSX, AGENT], env: base, workspaceFactory: workspaces, reapGraceMs: 1_000 });
      gw.gateway.withVirtualAgent(name, runner, { description: `a scripted helper (${name})` });
    },
    workspaceOf(node) {
      const dir = workspaces.dirs.get(node);
      if (dir === undefined) throw new Error(`no workspace was made for ${node}`);
      return dir;
    },
    async close() {
      await gw.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

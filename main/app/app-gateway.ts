// The desktop app's gateway, started without Electron (main.ts passes in what Electron knows), so
// test/app/app-gateway.test.ts starts the very same thing: the plugins, the bundled agents, the
// gateway on its socket, each registered with the teardown that stops it on quit.
import { join } from 'node:path';
import { bundledAgents, detectWorkspace, pruneWorktreesAtStart, type BundledWorkspace } from '../agents/bundled.js';
import type { WorkerCommand } from '../agents/worker-command.js';
import { engineIdleMsFromEnv } from '../compose/engine-idle.js';
import { access, ProtocolGateway, type StartedGateway } from '../gateway/index.js';
import { grantsFileBeside, type PluginGrants } from '../plugins/grants/index.js';
import { agentWorkspaceDir, openAppModules, userPluginsDir } from './app-modules.js';
import type { Teardown } from './lifecycle.js';

export interface AppGatewayOptions {
  /**
   * `app.getPath('userData')`: the user's plugin folder, the remembered approvals
   * (`approvals.json`) and, packaged, the agents' workspace are under it.
   */
  userData: string;
  /** `app.isPackaged`. */
  isPackaged: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  log: { info(line: string): void; error(line: string, err?: unknown): void };
  /** How the bundled agents' workers start (default: this package's `chatty-gateway worker`). */
  worker?: WorkerCommand;
}

export interface AppGateway {
  gateway: ProtocolGateway;
  started: StartedGateway;
  workspace: BundledWorkspace;
  /**
   * The plugins' grant desk (`registry.grants`): what a plugin asks for that is not granted for its
   * digest waits here for the window (`attachDesktopBridge`'s `grants`), and is not served until then.
   */
  grants: PluginGrants;
  /** `<userData>/plugin-grants.json`: for `attachDesktopBridge`'s `trustFiles` (the agents' workspace may not hold it). */
  grantsFile: string;
}

/**
 * Opens the plugins (the examples or CHATTY_MODULES_DIR, then `<userData>/plugins`), publishes
 * the bundled agents (`local-coder`, `local-reviewer`), keeps the "always" approval rules in
 * `<userData>/approvals.json` (the app's own, apart from `serve`'s) and the plugins' capability
 * grants in `<userData>/plugin-grants.json` (asked for at `grants`), and starts the gateway in
 * CHATTY_RUNTIME_DIR or the default runtime directory (one short enough for the socket on every
 * platform; a named one too deep is refused, with nothing created). Each part is added to
 * `teardown` as soon as it exists: the plugins closed, then (run first) the gateway stopped,
 * which cancels every task and reaps every child, and removes the socket and the token.
 */
export async function startAppGateway(options: AppGatewayOptions, teardown: Teardown): Promise<AppGateway> {
  const { env, log } = options;
  const engineIdleMs = engineIdleMsFromEnv(env); // CHATTY_ENGINE_IDLE_MS: a bad value is refused before anything is created
  const report = (line: string): void => log.info(`plugins: ${line}`);
  const approvalsFile = join(options.userData, 'approvals.json');
  // What a plugin asks for is granted per component digest, remembered beside the approval rules;
  // what is not granted yet waits at `modules.grants` for the window.
  const grantsFile = grantsFileBeside(approvalsFile);
  const { registry: modules } = await openAppModules(userPluginsDir(options.userData), env['CHATTY_MODULES_DIR'] || undefined, { report, registry: { grants: { file: grantsFile }, engineIdleMs } });
  teardown.add('close the plugins', () => modules.close());

  const workspace = await detectWorkspace(agentWorkspaceDir({ env, isPackaged: options.isPackaged, cwd: options.cwd, userData: options.userData }));
  await pruneWorktreesAtStart(workspace, (line) => log.info(line)); // what a killed app left in this repository
  const gateway = new ProtocolGateway(modules, {
    broker: {
      root: { workspaceRoot: workspace.workspaceRoot, ...(workspace.kind === 'git' ? { baseBranch: workspace.baseBranch } : {}) },
      log: (line) => log.info(`broker: ${line}`),
    },
    onError: (err) => log.error('gateway: handler failed', err),
    approvals: { file: approvalsFile },
  }).withRuntimeDir(env['CHATTY_RUNTIME_DIR'] || access.defaultRuntimeDir());
  for (const agent of bundledAgents({ workspace, ...(options.worker ? { worker: options.worker } : {}) })) gateway.withVirtualAgent(agent.name, agent.runner, agent.card);
  teardown.add('stop the gateway', () => gateway.stop());
  const started = await gateway.start();
  log.info(`gateway on ${started.socketPath}; agents ${workspace.kind === 'git' ? `in worktrees of ${workspace.workspaceRoot} (${workspace.baseBranch})` : `in ${workspace.workspaceRoot}`}`);
  return { gateway, started, workspace, grants: modules.grants, grantsFile };
}

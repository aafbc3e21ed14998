import { rmSync } from 'node:fs';
import { access, ProtocolGateway, type StartedGateway } from '../../gateway/index.js';
import { openModules } from '../../compose/modules.js';
import type { ModuleRegistry } from '../../plugins/index.js';
import { failure } from '../failure.js';
import { modulesDirWarning } from '../modules-dir-warning.js';

export interface ServeOptions {
  modulesDir?: string | undefined;
  runtimeDir?: string | undefined;
  json: boolean;
  /** `--remote-runner URL`; its token comes from `CHATTY_REMOTE_RUNNER_TOKEN`. */
  remoteRunner?: string | undefined;
}

/** The environment variable that holds the remote runner's bearer token. */
export const REMOTE_RUNNER_TOKEN_ENV = 'CHATTY_REMOTE_RUNNER_TOKEN';

const say = (line: string): void => {
  process.stderr.write(`chatty-gateway: ${line}\n`);
};

/** `chatty-gateway serve`: runs until SIGINT/SIGTERM, then removes the socket and token. */
export async function runServe(options: ServeOptions): Promise<number> {
  let stopRequested: Promise<NodeJS.Signals>;
  let gateway: ProtocolGateway;
  let modules: ModuleRegistry | undefined;
  let started: StartedGateway;
  try {
    // Check the runtime directory before loading modules (which may build the examples): a bad
    // directory is the user's to fix, and they should hear of it at once, with nothing created.
    access.refuseWindows();
    const runtimeDir = options.runtimeDir ?? access.defaultRuntimeDir();
    access.ensureRuntimeDir(runtimeDir);
    if (options.modulesDir !== undefined) {
      const warning = modulesDirWarning(options.modulesDir);
      if (warning !== undefined) say(warning);
    }
    // Until the gateway starts, Ctrl-C ends the process at once, as usual: nothing of it is
    // there to remove yet, and the first start may spend half a minute building the examples.
    modules = (await openModules(options.modulesDir, { report: say })).registry;
    // From here on a signal is a clean stop: whoever reads the ready line may signal at once, and
    // a signal while the gateway starts must still end with its socket and token removed.
    stopRequested = new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    const runnerToken = process.env[REMOTE_RUNNER_TOKEN_ENV] || undefined;
    const remoteRunner = options.remoteRunner === undefined ? undefined : { url: options.remoteRunner, ...(runnerToken ? { token: runnerToken } : {}) };
    gateway = new ProtocolGateway(modules, { runtimeDir, ...(remoteRunner ? { remoteRunner } : {}) });
    started = await gateway.start();
  } catch (err) {
    await modules?.close();
    return failure(err);
  }

  if (options.json) {
    process.stdout.write(`${JSON.stringify({ event: 'ready', socket: started.socketPath, token: started.tokenPath })}\n`);
  } else {
    const count = modules.list().length;
    process.stdout.write(
      [
        `chatty-gateway: serving ${count} module${count === 1 ? '' : 's'}`,
        `  socket: ${started.socketPath}`,
        `  token:  ${started.tokenPath}`,
        `  try:    curl --unix-socket ${started.socketPath} -H "Authorization: Bearer $(cat ${started.tokenPath})" http://localhost/`,
        '  stop:   Ctrl-C',
        '',
      ].join('\n'),
    );
  }

  const signal = await stopRequested;
  // A second signal while stopping (a stop that hangs, an impatient Ctrl-C) ends the process at
  // once, and the socket and the token still go with it.
  const leaveNow = (again: NodeJS.Signals): void => {
    rmSync(started.socketPath, { force: true });
    rmSync(started.tokenPath, { force: true });
    process.exit(again === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', leaveNow);
  process.on('SIGTERM', leaveNow);
  // Each step runs whatever failed before it (the gateway removes its socket and token in any
  // case); a failure is one line and exit 1, never a stack trace.
  let code = 0;
  try {
    await gateway.stop();
  } catch (err) {
    code = failure(err);
  }
  try {
    await modules.close();
  } catch (err) {
    code = failure(err);
  }
  if (!options.json && code === 0) process.stdout.write(`chatty-gateway: stopped (${signal})\n`);
  return code;
}

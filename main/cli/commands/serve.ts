import { parseArgs } from 'node:util';
import { access, ProtocolGateway } from '../../gateway/index.js';
import { openModules } from '../../compose/modules.js';
import type { ModuleRegistry } from '../../plugins/index.js';
import { failure } from '../main.js';

interface ServeOptions {
  modulesDir?: string;
  runtimeDir?: string;
  json: boolean;
}

function parseServeArgs(args: readonly string[]): ServeOptions {
  const { values } = parseArgs({
    args: [...args],
    options: {
      'modules-dir': { type: 'string' },
      'runtime-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  return { modulesDir: values['modules-dir'], runtimeDir: values['runtime-dir'], json: values.json ?? false };
}

/** `chatty-gateway serve`: runs until SIGINT/SIGTERM, then removes the socket and token. */
export async function runServe(args: readonly string[]): Promise<number> {
  let options: ServeOptions;
  try {
    options = parseServeArgs(args);
  } catch (err) {
    return failure(err);
  }

  // Listen for the stop signals first: whoever reads the ready line may signal at once, and a
  // signal during start-up must still end in a clean stop (socket and token removed).
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });

  let gateway: ProtocolGateway;
  let modules: ModuleRegistry | undefined;
  let started;
  try {
    // Check the runtime directory before loading modules (which may build the examples): a bad
    // directory is the user's to fix, and they should hear of it at once.
    access.refuseWindows();
    access.ensureRuntimeDir(options.runtimeDir ?? access.defaultRuntimeDir());
    modules = (await openModules(options.modulesDir, { report: (line) => process.stderr.write(`chatty-gateway: ${line}\n`) })).registry;
    gateway = new ProtocolGateway(modules, options.runtimeDir !== undefined ? { runtimeDir: options.runtimeDir } : {});
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
  await gateway.stop();
  await modules.close();
  if (!options.json) process.stdout.write(`chatty-gateway: stopped (${signal})\n`);
  return 0;
}

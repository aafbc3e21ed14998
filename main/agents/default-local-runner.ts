import { LocalRunner as CommandRunner, type LocalRunnerOptions as CommandRunnerOptions } from '../broker/runners/local-runner.js';
import { workerCommand } from './worker-command.js';

/** The package root's `LocalRunner` options: the broker's, with `command` optional. */
export type LocalRunnerOptions = Omit<CommandRunnerOptions, 'command'> & { command?: string };

/**
 * `LocalRunner` as the package root exports it: the broker's runner, which starts the command its
 * caller names, and without a `command` this package's own worker program
 * (`chatty-gateway worker --participant-fd 3`, the scripted agent; `defaultWorker(kind)` for
 * another kind) with the Node that runs the broker. The default lives here, in the composition,
 * so that main/broker/runners never names a worker of its own.
 */
export class LocalRunner extends CommandRunner {
  constructor(options: LocalRunnerOptions = {}) {
    super(withDefaultWorker(options));
  }
}

function withDefaultWorker(options: LocalRunnerOptions): CommandRunnerOptions {
  const { command, ...rest } = options;
  if (command !== undefined) return { ...rest, command };
  if (options.args !== undefined) throw new Error('LocalRunner: args without a command');
  const worker = workerCommand();
  // Inside Electron the worker needs ELECTRON_RUN_AS_NODE on top of whichever environment it gets.
  return { ...rest, command: worker.command, args: worker.args, ...(worker.env ? { extraEnv: { ...worker.env, ...options.extraEnv } } : {}) };
}

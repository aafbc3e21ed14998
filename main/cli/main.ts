import { CommanderError } from 'commander';
import { buildProgram, type Outcome } from './program.js';

/** Exit code of a command line that is not understood, as with the shell's own builtins. */
export const USAGE_EXIT = 2;

/** Runs one command line and resolves to the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const outcome: Outcome = { code: 0 };
  try {
    await buildProgram(outcome).parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return exitCodeOf(err);
  }
  return outcome.code;
}

/**
 * Asked-for help (`-h`, `--help`, `help <command>`) and `--version` end with commander's exit
 * code 0; help shown because a command was missing, and every parse error, exit 2.
 */
function exitCodeOf(err: CommanderError): number {
  return err.exitCode === 0 ? 0 : USAGE_EXIT;
}

/** The scripted reference agent (`chatty-gateway worker --agent scripted`): its task text is its script. */
import type { WorkerAgent } from '../kind.js';
import { killRunningCommands } from './exec.js';
import { runScript } from './runner.js';

export { parseLine, parseScript, unescapeText, type Instruction } from './language.js';
export { runScript } from './runner.js';
export { runCommand, killRunningCommands, EXEC_MAX_OUTPUT_BYTES, EXEC_TIMEOUT_MS, type ExecOptions, type ExecResult } from './exec.js';
export { replaceFileContent, resolveInWorkspace, WorkspaceRefusal } from './workspace-path.js';
export { commandFolder, pinWorkspace } from './workspace-pin.js';
export { diffStat } from './diff-stat.js';
export { countDiffStat, diffStatReplacing, MAX_OLD_CONTENT_BYTES, type CountedDiffStat } from './old-content.js';
export type { OldFileSeen } from './old-file-seen.js';

export function scriptedAgent(): WorkerAgent {
  return {
    card: {
      name: 'scripted',
      display_name: 'Scripted agent',
      description: 'The reference agent: runs the instructions in its task text, one per line (say, step, exec, write, ask, invoke, agents, post, sleep, fail; anything else is echoed).',
      version: '1.0.0',
      skills: [
        {
          name: 'script',
          description: 'Runs a script: exec and write only after the human approves, and only in its workspace.',
          examples: ['say hello', 'exec echo hi', 'write notes.txt first line\\nsecond line', 'ask Which database? | Postgres | SQLite', 'invoke local-reviewer say looks good'],
        },
      ],
    },
    run: runScript,
    shutdown: killRunningCommands,
  };
}

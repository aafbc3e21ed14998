/**
 * The scripted agent's language: its task text, one instruction per line. The first word of a line
 * is the instruction; the rest of the line is its argument. A line whose first word is not an
 * instruction (or whose arguments do not fit it) is echoed back. Blank lines are skipped.
 *
 *   say <text>                       an artifact chunk: <text> and a new line
 *   step <name>                      a working status
 *   exec <command>                   human.approve kind exec; if approved, /bin/sh -c <command> in the workspace
 *   write <path> <text>              human.approve kind write (diff stat +N -M); if approved, writes <text> to <path> in the workspace
 *   ask <question> [| option | …]    human.ask; reports the answer
 *   invoke <agent> <prompt…>         agent.invoke; reports the response
 *   agents                           agent.list; reports each agent
 *   post <to> <text>                 mailbox.post
 *   sleep <ms>                       waits
 *   fail <reason>                    ends the task failed
 *
 * In `invoke`'s prompt and `write`'s text `\n` is a new line and `\\` a backslash (any other
 * backslash stays as it is), so a nested script is one line: `invoke b say one\nsay two`, and a
 * script two levels down writes `\\n` for its own new lines.
 */

import { decodeTaskText } from '../../shell/task-text.js';

export type Instruction =
  | { op: 'say'; text: string }
  | { op: 'step'; name: string }
  | { op: 'exec'; command: string }
  | { op: 'write'; path: string; text: string }
  | { op: 'ask'; question: string; options: string[] }
  | { op: 'invoke'; agent: string; prompt: string }
  | { op: 'agents' }
  | { op: 'post'; to: string; text: string }
  | { op: 'sleep'; ms: number }
  | { op: 'fail'; reason: string }
  | { op: 'echo'; line: string };

/** The longest `sleep` (an hour): a longer one is a typo, echoed back rather than obeyed. */
export const MAX_SLEEP_MS = 3_600_000;

/** `\n` → a new line, `\\` → a backslash; any other backslash is kept: the one-line rule `run` and `serve` read task text by. */
export const unescapeText: (text: string) => string = decodeTaskText;

/** The script's instructions, in order (blank lines skipped). */
export function parseScript(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') continue;
    instructions.push(parseLine(line));
  }
  return instructions;
}

/** One line as an instruction; anything that is not one is `echo`. */
export function parseLine(line: string): Instruction {
  const trimmed = line.trim();
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  const word = match?.[1] ?? '';
  const rest = (match?.[2] ?? '').trim();
  const echo: Instruction = { op: 'echo', line };
  switch (word) {
    case 'say':
      return { op: 'say', text: rest };
    case 'step':
      return rest === '' ? echo : { op: 'step', name: rest };
    case 'exec':
      return rest === '' ? echo : { op: 'exec', command: rest };
    case 'write': {
      const [path, text] = splitWord(rest);
      return path === '' ? echo : { op: 'write', path, text: unescapeText(text) };
    }
    case 'ask': {
      const [question = '', ...options] = rest.split('|').map((part) => part.trim());
      return question === '' ? echo : { op: 'ask', question, options: options.filter((option) => option !== '') };
    }
    case 'invoke': {
      const [agent, prompt] = splitWord(rest);
      return agent === '' || prompt === '' ? echo : { op: 'invoke', agent, prompt: unescapeText(prompt) };
    }
    case 'agents':
      return rest === '' ? { op: 'agents' } : echo;
    case 'post': {
      const [to, text] = splitWord(rest);
      return to === '' || text === '' ? echo : { op: 'post', to, text };
    }
    case 'sleep': {
      if (!/^\d+$/.test(rest)) return echo;
      const ms = Number(rest);
      return ms > MAX_SLEEP_MS ? echo : { op: 'sleep', ms };
    }
    case 'fail':
      return { op: 'fail', reason: rest === '' ? 'failed as the script says' : rest };
    default:
      return echo;
  }
}

/** The first word and the rest (trimmed at the start). */
function splitWord(text: string): [string, string] {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  return [match?.[1] ?? '', match?.[2] ?? ''];
}

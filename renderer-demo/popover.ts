// The approval and question popovers: one modal dialog showing the first waiting request; the
// others queue behind it. Keyboard: focus stays inside (Tab and Shift+Tab wrap), Escape denies
// an approval and puts a question back in the queue for later; focus returns where it was.
import type { ChattyBridge, PendingApproval, PendingQuestion } from '../main/app/bridge/contract.js';
import { announce, focusables, h } from './dom.js';

export type Waiting = { kind: 'approval'; view: PendingApproval } | { kind: 'question'; view: PendingQuestion };

export class Popovers {
  private queue: Waiting[] = [];
  /** Questions put off with Escape: shown after the others, or when the waiting button is used. */
  private readonly later = new Set<string>();
  private shown: string | undefined;
  private busy = false;
  private returnFocus: HTMLElement | null = null;

  constructor(
    private readonly bridge: ChattyBridge,
    private readonly dialog: HTMLDialogElement,
    private readonly body: HTMLElement,
    private readonly waitingButton: HTMLButtonElement,
  ) {
    dialog.addEventListener('keydown', (event) => this.onKey(event));
    // Escape reaches `cancel` when keydown did not see it (focus outside the body): same meaning.
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      this.escape();
    });
    waitingButton.addEventListener('click', () => {
      this.later.clear();
      this.render(true);
    });
  }

  get size(): number {
    return this.queue.length;
  }

  add(waiting: Waiting): void {
    if (this.queue.some((w) => w.view.requestId === waiting.view.requestId)) return;
    this.queue.push(waiting);
    announce(waiting.kind === 'approval' ? `${waiting.view.asker.agent} asks for approval` : `${waiting.view.asker.agent} asks a question`);
    this.render();
  }

  /** The asker withdrew it (or it ended otherwise): gone from the queue, its popover closed. */
  remove(requestId: string, why?: string): void {
    const before = this.queue.length;
    this.queue = this.queue.filter((w) => w.view.requestId !== requestId);
    this.later.delete(requestId);
    if (before !== this.queue.length && why) announce(why);
    this.render();
  }

  private ordered(): Waiting[] {
    return [...this.queue.filter((w) => !this.later.has(w.view.requestId)), ...this.queue.filter((w) => this.later.has(w.view.requestId))];
  }

  private render(force = false): void {
    const n = this.queue.length;
    this.waitingButton.hidden = n === 0;
    this.waitingButton.textContent = `${n} waiting`;
    this.waitingButton.setAttribute('aria-label', `${n} request${n === 1 ? '' : 's'} waiting for you: show`);
    const next = this.ordered()[0];
    if (!next || (!force && this.later.has(next.view.requestId))) {
      this.close();
      return;
    }
    if (this.shown === next.view.requestId && this.dialog.open) {
      this.updateQueueLine();
      return;
    }
    this.show(next);
  }

  private show(waiting: Waiting): void {
    this.shown = waiting.view.requestId;
    this.busy = false;
    this.body.replaceChildren(...(waiting.kind === 'approval' ? this.approvalContent(waiting.view) : this.questionContent(waiting.view)));
    this.dialog.dataset['kind'] = waiting.kind;
    this.dialog.dataset['requestId'] = waiting.view.requestId;
    if (!this.dialog.open) {
      const active = document.activeElement;
      this.returnFocus = active instanceof HTMLElement && active !== document.body ? active : null;
      this.dialog.showModal();
    }
    this.updateQueueLine();
    const first = this.body.querySelector<HTMLElement>('[data-autofocus]') ?? focusables(this.body)[0];
    first?.focus();
  }

  private close(): void {
    this.shown = undefined;
    if (!this.dialog.open) return;
    this.dialog.close();
    this.body.replaceChildren();
    const target = this.returnFocus;
    this.returnFocus = null;
    if (target?.isConnected) target.focus();
  }

  private updateQueueLine(): void {
    const line = this.body.querySelector('.queue');
    if (!line) return;
    const more = this.queue.length - 1;
    line.textContent = more > 0 ? `${more} more waiting after this one` : '';
  }

  private current(): Waiting | undefined {
    return this.queue.find((w) => w.view.requestId === this.shown);
  }

  private escape(): void {
    const current = this.current();
    if (!current) return this.close();
    if (current.kind === 'approval') void this.answerApproval(current.view, 'denied');
    else {
      this.later.add(current.view.requestId);
      announce('question put off: it waits in the queue');
      this.render();
    }
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      this.escape();
      return;
    }
    if (event.key !== 'Tab') return;
    const items = focusables(this.body);
    if (items.length === 0) return event.preventDefault();
    const first = items[0]!;
    const last = items[items.length - 1]!;
    const active = document.activeElement;
    const inside = active instanceof HTMLElement && this.body.contains(active);
    if (event.shiftKey && (active === first || !inside)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || !inside)) {
      event.preventDefault();
      first.focus();
    }
  }

  // --- contents --------------------------------------------------------------------------------

  private who(asker: { agent: string; chain: string[] }, taskId: string | null): HTMLElement {
    return h(
      'dl',
      { className: 'facts' },
      h('dt', {}, 'Asked by'),
      h('dd', { className: 'asker' }, asker.agent),
      h('dt', {}, 'Chain'),
      h('dd', {}, h('ol', { className: 'chain', attrs: { 'aria-label': `chain ${asker.chain.join(', then ')}` } }, ...asker.chain.map((role) => h('li', {}, role)))),
      taskId ? h('dt', {}, 'Task') : null,
      taskId ? h('dd', { className: 'task-id' }, taskId) : null,
    );
  }

  private approvalContent(view: PendingApproval): Node[] {
    const exec = view.kind === 'exec';
    const deny = h('button', { className: 'deny', attrs: { type: 'button', 'data-autofocus': '' }, on: { click: () => void this.answerApproval(view, 'denied') } }, 'Deny');
    const approve = h('button', { className: 'primary approve', attrs: { type: 'button' }, on: { click: () => void this.answerApproval(view, 'approved') } }, 'Approve');
    return [
      h('h2', { attrs: { id: 'popover-title' } }, exec ? 'Run this command?' : 'Write this file?'),
      h('p', { attrs: { id: 'popover-desc' } }, `${view.asker.agent} asks for approval to ${exec ? 'run a command' : 'write a file'} in its workspace.`),
      h(
        'dl',
        { className: 'facts' },
        h('dt', {}, 'Kind'),
        h('dd', { className: 'kind' }, view.kind),
        h('dt', {}, exec ? 'Command' : 'Path'),
        h('dd', {}, h('code', { className: 'subject' }, view.commandOrPath)),
        view.diffStat !== undefined ? h('dt', {}, 'Diff') : null,
        view.diffStat !== undefined ? h('dd', { className: 'diffstat' }, view.diffStat) : null,
      ),
      this.who(view.asker, view.taskId),
      h('p', { className: 'queue muted' }),
      h('div', { className: 'actions' }, deny, approve),
      h('p', { className: 'muted small' }, 'Escape denies.'),
    ];
  }

  private questionContent(view: PendingQuestion): Node[] {
    const single = view.questions.length === 1;
    const chosen = new Map<string, { answer: string; custom: boolean }>();
    const send = h('button', { className: 'primary send', attrs: { type: 'button' } }, single ? 'Send answer' : 'Send answers');
    const refresh = (): void => {
      send.disabled = view.questions.some((q) => !chosen.get(q.id)?.answer);
    };
    const fieldsets = view.questions.map((q, i) => {
      const free = h('input', { className: 'free', attrs: { id: `free-${i}`, type: 'text', autocomplete: 'off' } });
      const options = q.options.map((option) =>
        h(
          'button',
          {
            className: 'option',
            attrs: { type: 'button', 'aria-pressed': 'false' },
            on: {
              click: (event) => {
                chosen.set(q.id, { answer: option, custom: false });
                free.value = '';
                for (const b of (event.currentTarget as HTMLElement).parentElement?.querySelectorAll('.option') ?? []) b.setAttribute('aria-pressed', String(b === event.currentTarget));
                refresh();
                if (single) void this.answerQuestion(view, [{ id: q.id, answer: option, custom: false }]);
              },
            },
          },
          option,
        ),
      );
      free.addEventListener('input', () => {
        if (free.value.trim() === '') chosen.delete(q.id);
        else chosen.set(q.id, { answer: free.value, custom: true });
        for (const b of options) b.setAttribute('aria-pressed', 'false');
        refresh();
      });
      free.addEventListener('keydown', (event) => {
        if (event.key === 'Enter' && !send.disabled) {
          event.preventDefault();
          send.click();
        }
      });
      return h(
        'fieldset',
        { className: 'question' },
        h('legend', {}, q.question),
        options.length > 0 ? h('div', { className: 'options', attrs: { role: 'group', 'aria-label': 'options' } }, ...options) : null,
        h('label', { attrs: { for: `free-${i}` } }, options.length > 0 ? 'Or your own answer' : 'Your answer'),
        free,
      );
    });
    send.addEventListener('click', () => {
      const answers = view.questions.map((q) => ({ id: q.id, answer: chosen.get(q.id)?.answer ?? '', custom: chosen.get(q.id)?.custom ?? false }));
      void this.answerQuestion(view, answers);
    });
    refresh();
    const first = fieldsets[0]?.querySelector<HTMLElement>('.option, .free');
    first?.setAttribute('data-autofocus', '');
    return [
      h('h2', { attrs: { id: 'popover-title' } }, `${view.asker.agent} asks`),
      h('p', { attrs: { id: 'popover-desc' } }, single ? 'Pick an option or write your own answer.' : 'Answer each question, then send.'),
      ...fieldsets,
      this.who(view.asker, view.taskId),
      h('p', { className: 'queue muted' }),
      h('div', { className: 'actions' }, h('button', { className: 'later', attrs: { type: 'button' }, on: { click: () => this.escape() } }, 'Later'), send),
      h('p', { className: 'muted small' }, 'Escape puts the question off; it stays waiting.'),
    ];
  }

  // --- answers ---------------------------------------------------------------------------------

  private async answerApproval(view: PendingApproval, verdict: 'approved' | 'denied'): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.bridge.answerApproval({ requestId: view.requestId, verdict });
      announce(`${verdict} ${view.commandOrPath}`);
    } catch (err) {
      announce(`could not answer: ${(err as Error).message}`);
    } finally {
      this.busy = false;
      this.remove(view.requestId);
    }
  }

  private async answerQuestion(view: PendingQuestion, answers: { id: string; answer: string; custom: boolean }[]): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.bridge.answerQuestion({ requestId: view.requestId, answers });
      announce('answer sent');
    } catch (err) {
      announce(`could not answer: ${(err as Error).message}`);
    } finally {
      this.busy = false;
      this.remove(view.requestId);
    }
  }
}

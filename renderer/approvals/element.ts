// <chatty-approvals>: the approval and question popover as a framework-free custom element. It
// takes the `window.chatty` API (its `bridge` property, else `window.chatty` once connected),
// shows the waiting requests one at a time in a modal dialog (an agent's approval or question, a
// plugin's capability request: grant-view.ts), and answers them. What it promises
// the person (docs/desktop.md, "The approvals element"):
// - every text a worker controls is shown exactly (the display rule), with a warning when it
//   holds hidden characters;
// - it opens at the top (title, asker, the start of the command in view, focus on the title, not
//   on a button), the command in a bounded box of its own, the buttons always in view;
// - its buttons and keys are inert for GUARD_MS after it appears or its content changes, and each
//   choice answers at most the one request it was shown with;
// - a request stays until it is answered or withdrawn; a refused answer keeps it open with the
//   error; a withdrawn one leaves a trace line; Escape and Later put a request off, never decide it.
import type { ChattyBridge, PendingApproval, PendingGrant, PendingQuestion, Snapshot } from '../../main/app/bridge/contract.js';
import { GUARD_MS, REPLACED_GUARD_TIMES } from '../../main/display/index.js';
import { approvalContent, type ApprovalAnswer } from './approval-view.js';
import { grantContent, type GrantAnswer } from './grant-view.js';
import { el, localClock, shown, shownInOrder } from './parts.js';
import { questionContent, type QuestionAnswer } from './question-view.js';
import { approvalsSheet } from './styles.js';
import type { PopoverContent, ViewContext } from './view.js';

/** How long (ms) a popover's buttons and keys stay inert after it appears or its content changes: the one guard time of both roots (main/display). */
export { GUARD_MS };

/** How many of the requests waiting behind the shown one the queue line names. */
const QUEUE_NAMED = 3;

export type Waiting = { kind: 'approval'; view: PendingApproval } | { kind: 'question'; view: PendingQuestion } | { kind: 'grant'; view: PendingGrant };

/** The element whose shadow root holds focus, followed down: the focused element itself. */
function deepActive(): HTMLElement | null {
  let active = document.activeElement;
  while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
  return active instanceof HTMLElement && active !== document.body ? active : null;
}

export class ChattyApprovals extends HTMLElement {
  /** The guard time of this element (ms); GUARD_MS unless a page sets it. */
  guardMs = GUARD_MS;

  #bridge: ChattyBridge | undefined;
  #unsubscribe: (() => void)[] = [];
  #queue: Waiting[] = [];
  /** Requests put off with Later or Escape: shown after the others, or when "N waiting" is used. */
  readonly #later = new Set<string>();
  /** Withdrawn before the snapshot's answer came: not shown from it. */
  readonly #gone = new Set<string>();
  #shown: string | undefined;
  #busy = false;
  #armed = false;
  #armTimer: ReturnType<typeof setTimeout> | undefined;
  /** The arming running now: for which request, and when (performance.now()) it ends. */
  #arming: { requestId: string; until: number } | undefined;
  #returnFocus: HTMLElement | null = null;
  /**
   * The request on the screen was withdrawn (not answered): what it was, for the next popover,
   * whether it was already queued or is asked a moment later (a withdraw, then a new ask, reopened
   * in the same place with the same buttons). Kept until a request is shown, as the terminal's.
   */
  #replaced: Waiting | undefined;

  readonly #waitingButton: HTMLButtonElement;
  readonly #trace: HTMLParagraphElement;
  readonly #live: HTMLElement;
  readonly #dialog: HTMLDialogElement;
  readonly #title: HTMLHeadingElement;
  readonly #desc: HTMLParagraphElement;
  readonly #warnings: HTMLElement;
  readonly #body: HTMLElement;
  readonly #error: HTMLParagraphElement;
  readonly #guard: HTMLParagraphElement;
  readonly #queueLine: HTMLParagraphElement;
  readonly #actions: HTMLElement;

  constructor() {
    super();
    const root = this.attachShadow({ mode: 'open' });
    root.adoptedStyleSheets = [approvalsSheet()];
    this.#waitingButton = el('button', { className: 'waiting', attrs: { type: 'button', id: 'waiting', hidden: '' }, onClick: () => this.showWaiting() });
    this.#trace = el('p', { className: 'trace', attrs: { id: 'trace', hidden: '' } });
    this.#live = el('div', { className: 'visually-hidden', attrs: { role: 'status', 'aria-live': 'polite' } });
    this.#title = el('h2', { attrs: { id: 'popover-title', tabindex: '-1', autofocus: '' } });
    this.#desc = el('p', { attrs: { id: 'popover-desc' } });
    this.#warnings = el('div', { className: 'warnings' });
    this.#body = el('div', { className: 'body' });
    this.#error = el('p', { className: 'error', attrs: { role: 'alert', hidden: '' } });
    this.#guard = el('p', { className: 'guard', attrs: { hidden: '' } }, 'The buttons wake in a moment…');
    this.#queueLine = el('p', { className: 'queue muted' });
    this.#actions = el('div', { className: 'actions-slot' });
    this.#dialog = el(
      'dialog',
      { attrs: { id: 'popover', 'aria-labelledby': 'popover-title', 'aria-describedby': 'popover-desc' } },
      el('header', { className: 'head' }, this.#title, this.#desc, this.#warnings),
      this.#body,
      el('footer', { className: 'foot' }, this.#error, this.#guard, this.#queueLine, this.#actions, el('p', { className: 'hint muted' }, 'Escape or Later puts it off: it keeps waiting.')),
    );
    this.#dialog.addEventListener('keydown', (event) => this.#onKey(event));
    // Escape reaches `cancel` when keydown did not see it: the same meaning, never a decision.
    this.#dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      this.#putOff();
    });
    // Closed by the browser itself (a close request we could not cancel): put off, still waiting.
    // `close` comes as a task after the closing: our own #close() left nothing shown by then, or
    // the popover is open again with the next request, which this event is not about.
    this.#dialog.addEventListener('close', () => {
      if (!this.#dialog.open && this.#shown !== undefined) this.#putOff();
    });
    root.append(el('div', { className: 'bar', attrs: { part: 'bar' } }, this.#waitingButton, this.#trace), this.#live, this.#dialog);
  }

  connectedCallback(): void {
    // The preload's API, where the page has one (read, not declared: a page may type it its own way).
    const chatty = (window as { chatty?: ChattyBridge }).chatty;
    if (!this.#bridge && chatty) this.bridge = chatty;
    window.addEventListener('focus', this.#onWindowFocus);
  }

  disconnectedCallback(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#bridge = undefined;
    window.removeEventListener('focus', this.#onWindowFocus);
  }

  /**
   * The window took the focus back (the person came back, or the app was brought forward, as a
   * second launch does, while they typed elsewhere): the keys on their way were meant for another
   * program. The focus goes to the title and the guard time starts again, as for a new popover.
   */
  readonly #onWindowFocus = (): void => {
    if (!this.#dialog.open || this.#shown === undefined) return;
    this.#title.focus({ preventScroll: true });
    this.#arm();
  };

  /** The `window.chatty` API it answers through; setting it subscribes and loads what waits. */
  get bridge(): ChattyBridge | undefined {
    return this.#bridge;
  }

  set bridge(bridge: ChattyBridge | undefined) {
    for (const off of this.#unsubscribe.splice(0)) off();
    this.#bridge = bridge;
    if (bridge) void this.#connect(bridge);
  }

  /** How many requests wait (the one shown among them). */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Adds a waiting request (a page that feeds the element itself rather than through `bridge`). */
  add(waiting: Waiting): void {
    if (this.#gone.has(waiting.view.requestId) || this.#queue.some((w) => w.view.requestId === waiting.view.requestId)) return;
    this.#queue.push(waiting);
    this.#announce(announcement(waiting));
    this.#render();
  }

  /** The asker withdrew it: gone from the queue, its popover closed, a trace line left. */
  withdraw(requestId: string, reason: string): void {
    this.#gone.add(requestId);
    const waiting = this.#queue.find((w) => w.view.requestId === requestId);
    if (!waiting) return;
    this.#queue = this.#queue.filter((w) => w !== waiting);
    this.#later.delete(requestId);
    this.#leaveTrace(`withdrawn (${reason})`, waiting);
    // The person may have been about to answer it: what takes its place says so, and waits longer.
    if (this.#shown === requestId && this.#dialog.open) this.#replaced = waiting;
    this.#render();
  }

  /** Shows the waiting requests again, those put off included. */
  showWaiting(): void {
    this.#later.clear();
    this.#render(true);
  }

  // --- the bridge ------------------------------------------------------------------------------

  async #connect(bridge: ChattyBridge): Promise<void> {
    // Events that arrive before the snapshot's answer are applied after it (duplicates are dropped).
    let ready = false;
    const early: (() => void)[] = [];
    const live = (apply: () => void): void => (ready ? apply() : void early.push(apply));
    this.#unsubscribe.push(
      bridge.onApproval((view) => live(() => this.add({ kind: 'approval', view }))),
      bridge.onQuestion((view) => live(() => this.add({ kind: 'question', view }))),
      bridge.onGrant((view) => live(() => this.add({ kind: 'grant', view }))),
      bridge.onWithdrawn((w) => {
        this.#gone.add(w.requestId);
        live(() => this.withdraw(w.requestId, w.reason));
      }),
      // The window is answered no more (its preload copy was changed): the person is told why, and what to do.
      bridge.onRefused((r) => live(() => this.#leaveTrace(`this window is answered no more: ${r.reason}`))),
    );
    let snapshot: Snapshot;
    try {
      snapshot = await bridge.snapshot();
    } catch (err) {
      this.#leaveTrace(`could not load the waiting requests: ${(err as Error)?.message ?? String(err)}`);
      return;
    }
    if (this.#bridge !== bridge) return;
    const waiting: Waiting[] = [
      ...snapshot.approvals.map((view) => ({ kind: 'approval' as const, view })),
      ...snapshot.questions.map((view) => ({ kind: 'question' as const, view })),
      ...snapshot.grants.map((view) => ({ kind: 'grant' as const, view })),
    ];
    for (const w of waiting.sort((a, b) => a.view.at - b.view.at)) this.add(w);
    ready = true;
    for (const apply of early.splice(0)) apply();
  }

  // --- showing -----------------------------------------------------------------------------------

  #ordered(): Waiting[] {
    return [...this.#queue.filter((w) => !this.#later.has(w.view.requestId)), ...this.#queue.filter((w) => this.#later.has(w.view.requestId))];
  }

  #render(force = false): void {
    const n = this.#queue.length;
    this.#waitingButton.hidden = n === 0;
    this.#waitingButton.textContent = `${n} waiting`;
    this.#waitingButton.title = `${n} request${n === 1 ? '' : 's'} waiting for you: show`;
    const next = this.#ordered()[0];
    if (!next || (!force && this.#later.has(next.view.requestId))) return this.#close();
    if (this.#shown === next.view.requestId && this.#dialog.open) return this.#updateQueueLine();
    this.#show(next);
  }

  #show(waiting: Waiting): void {
    const requestId = waiting.view.requestId;
    this.#shown = requestId;
    this.#busy = false;
    const content: PopoverContent =
      waiting.kind === 'approval'
        ? approvalContent(waiting.view, this.#context<ApprovalAnswer>(waiting))
        : waiting.kind === 'question'
          ? questionContent(waiting.view, this.#context<QuestionAnswer>(waiting))
          : grantContent(waiting.view, this.#context<GrantAnswer>(waiting));
    this.#title.textContent = content.title;
    this.#desc.replaceChildren(...content.desc);
    const replaced = this.#replaced;
    this.#replaced = undefined;
    const replacedNote =
      replaced !== undefined
        ? [el('p', { className: 'replaced-note' }, el('strong', {}, 'The request you were reading was withdrawn: '), ...describedNodes(replaced), '. This is another request: read it before you answer.')]
        : [];
    this.#warnings.replaceChildren(...replacedNote, ...content.warnings);
    this.#body.replaceChildren(...content.body);
    this.#actions.replaceChildren(...content.actions());
    this.#error.hidden = true;
    this.#error.textContent = '';
    const data = this.#dialog.dataset;
    data['kind'] = content.kind;
    data['requestId'] = requestId;
    data['danger'] = String(content.danger);
    data['hidden'] = String(content.hidden);
    if (!this.#dialog.open) {
      this.#returnFocus = deepActive();
      this.#dialog.showModal();
    }
    this.#updateQueueLine();
    // Open at the top, focus on the title: no button has the focus, so a key typed for something
    // else does nothing here.
    this.#body.scrollTop = 0;
    for (const box of this.#body.querySelectorAll<HTMLElement>('.subject')) box.scrollTop = 0;
    this.#title.focus({ preventScroll: true });
    content.shown?.();
    // In place of a withdrawn request (a swap the person did not make): three guard times, so a
    // click or key meant for the one they were reading lands nowhere.
    this.#arm(replaced !== undefined ? REPLACED_GUARD_TIMES * this.guardMs : this.guardMs);
  }

  #close(): void {
    this.#shown = undefined;
    this.#disarm();
    if (!this.#dialog.open) return;
    this.#dialog.close();
    for (const part of [this.#desc, this.#warnings, this.#body, this.#actions]) part.replaceChildren();
    const target = this.#returnFocus;
    this.#returnFocus = null;
    if (target?.isConnected) target.focus();
  }

  /** `2 more waiting after this one: planner-1 asks for approval · coder-0 asks a question`: who waits is named (at most three; the rest counted). */
  #updateQueueLine(): void {
    const others = this.#ordered().filter((w) => w.view.requestId !== this.#shown);
    if (others.length === 0) return this.#queueLine.replaceChildren();
    const named = others.slice(0, QUEUE_NAMED).map(announcement).join(' · ');
    const rest = others.length > QUEUE_NAMED ? ` · ${others.length - QUEUE_NAMED} more` : '';
    this.#queueLine.replaceChildren(`${others.length} more waiting after this one: `, shown(named), rest);
  }

  /**
   * Buttons and keys inert for the guard time; the cue shows meanwhile. Never ends before an
   * arming already running for the same request: the window taking the focus back (one guard
   * time) does not cut short the three a popover that replaced a withdrawn one waits.
   */
  #arm(ms = this.guardMs): void {
    const requestId = this.#shown;
    const now = performance.now();
    const running = this.#armTimer !== undefined && this.#arming !== undefined && this.#arming.requestId === requestId ? this.#arming.until : 0;
    const until = Math.max(now + ms, running);
    this.#disarm();
    if (requestId !== undefined) this.#arming = { requestId, until };
    this.#armed = false;
    this.#dialog.dataset['armed'] = 'false';
    this.#actions.inert = true;
    this.#guard.hidden = false;
    this.#armTimer = setTimeout(() => {
      this.#armTimer = undefined;
      this.#arming = undefined;
      this.#armed = true;
      this.#dialog.dataset['armed'] = 'true';
      this.#actions.inert = false;
      this.#guard.hidden = true;
    }, until - now);
  }

  #disarm(): void {
    if (this.#armTimer !== undefined) clearTimeout(this.#armTimer);
    this.#armTimer = undefined;
    this.#arming = undefined;
  }

  #context<Answer extends Decision>(waiting: Waiting): ViewContext<Answer> {
    const requestId = waiting.view.requestId;
    // A choice counts only for the request it was shown with, once the guard has passed, once.
    const current = (): boolean => this.#shown === requestId && this.#armed && !this.#busy;
    return {
      decide: (answer) => {
        if (current()) void this.#answer(waiting, answer);
      },
      later: () => {
        if (current()) this.#putOff();
      },
      swapActions: (nodes) => {
        if (!current()) return;
        this.#actions.replaceChildren(...nodes);
        this.#title.focus({ preventScroll: true });
        this.#arm();
      },
      error: (text) => this.#showError(text),
      armed: current,
    };
  }

  #showError(text: string): void {
    this.#error.replaceChildren(shown(text));
    this.#error.hidden = false;
  }

  #putOff(): void {
    const id = this.#shown;
    if (id === undefined) return;
    this.#later.add(id);
    this.#announce('put off: it keeps waiting');
    this.#render();
    if (this.#shown === id) this.#close(); // the only one waiting
  }

  async #answer(waiting: Waiting, answer: Decision): Promise<void> {
    const bridge = this.#bridge;
    if (!bridge) return this.#showError('Not connected: no answer can be sent from this page.');
    const requestId = waiting.view.requestId;
    this.#busy = true;
    this.#dialog.dataset['busy'] = 'true';
    this.#error.hidden = true;
    try {
      if (waiting.kind === 'approval') await bridge.answerApproval({ requestId, ...(answer as ApprovalAnswer) });
      else if (waiting.kind === 'question') await bridge.answerQuestion({ requestId, answers: answer as QuestionAnswer });
      else await bridge.answerGrant({ requestId, decision: answer as GrantAnswer });
    } catch (err) {
      // Refused: the request still waits in main, so it stays here, with why.
      this.#busy = false;
      delete this.#dialog.dataset['busy'];
      this.#showError(`The answer was refused: ${(err as Error)?.message ?? String(err)}`);
      return;
    }
    this.#busy = false;
    delete this.#dialog.dataset['busy'];
    this.#queue = this.#queue.filter((w) => w.view.requestId !== requestId);
    this.#later.delete(requestId);
    this.#leaveTrace(outcome(waiting, answer), waiting);
    this.#render();
  }

  #onKey(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      event.preventDefault();
      this.#putOff();
      return;
    }
    // While the guard holds, keys do nothing here (a key meant for something else lands nowhere).
    if (!this.#armed && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      return;
    }
    if (event.key !== 'Tab') return;
    const items = focusables(this.#dialog);
    if (items.length === 0) return event.preventDefault();
    const first = items[0]!;
    const last = items[items.length - 1]!;
    const active = this.shadowRoot?.activeElement ?? null;
    const inside = active instanceof HTMLElement && items.includes(active);
    if (event.shiftKey && (active === first || !inside)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || !inside)) {
      event.preventDefault();
      first.focus();
    }
  }

  /** `what` (the popover's own words), then the request it was about, if any, as `describedNodes` draws it. */
  #leaveTrace(what: string, waiting?: Waiting): void {
    const about = waiting !== undefined ? [': ', ...describedNodes(waiting)] : [];
    this.#trace.replaceChildren(el('time', {}, localClock(Date.now())), ' ', shown(what), ...about);
    this.#trace.hidden = false;
    this.#announce(waiting !== undefined ? `${what}: ${describe(waiting)}` : what);
  }

  #announce(text: string): void {
    this.#live.textContent = text;
  }
}

/** The elements of `root` that take keyboard focus, in tab order. */
function focusables(root: HTMLElement): HTMLElement[] {
  const selector = 'button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])';
  return [...root.querySelectorAll<HTMLElement>(selector)].filter((e) => !e.hasAttribute('disabled') && !e.closest('[hidden], [inert]') && e.tabIndex >= 0);
}

/** What a choice in any popover sends: an approval's verdict, a question's answers, a grant's decision. */
type Decision = ApprovalAnswer | QuestionAnswer | GrantAnswer;

function announcement(waiting: Waiting): string {
  if (waiting.kind === 'approval') return `${waiting.view.asker.agent} asks for approval`;
  if (waiting.kind === 'question') return `${waiting.view.asker.agent} asks a question`;
  return `plugin ${waiting.view.plugin} asks for capabilities`;
}

/**
 * `describe` as nodes: worker text through the display rule, and an approval's command or path
 * drawn in the order the shell reads it (`in-order`, as in the popover's subject box), so the note
 * naming a withdrawn `x/א ב/../ג.txt` is not drawn `x/ג/../ב א.txt`.
 */
function describedNodes(waiting: Waiting): Node[] {
  if (waiting.kind !== 'approval') return [shown(describe(waiting))];
  const { kind, commandOrPath, asker } = waiting.view;
  return [document.createTextNode(`${kind} `), el('span', { className: 'in-order' }, shownInOrder(commandOrPath)), document.createTextNode(' ('), shown(asker.agent), document.createTextNode(')')];
}

/** A request in one line of plain text (the live region's announcement). */
function describe(waiting: Waiting): string {
  if (waiting.kind === 'approval') return `${waiting.view.kind} ${waiting.view.commandOrPath} (${waiting.view.asker.agent})`;
  if (waiting.kind === 'grant') return `plugin ${waiting.view.plugin} ${waiting.view.version} (${waiting.view.digestShort}): ${waiting.view.asks.map((a) => `${a.capability}: ${a.detail}`).join('; ')}`;
  return `question from ${waiting.view.asker.agent}: ${waiting.view.questions.map((q) => q.question).join(' / ')}`;
}

function outcome(waiting: Waiting, answer: Decision): string {
  if (waiting.kind === 'question') return 'answered';
  if (waiting.kind === 'grant') return answer === 'granted' ? 'granted' : 'denied';
  const a = answer as ApprovalAnswer;
  if (a.verdict === 'denied') return 'denied';
  if (a.remember === 'task') return 'approved for this task';
  if (a.remember === 'always') return 'approved always';
  return 'approved once';
}

/**
 * Defines `<chatty-approvals>` (or `name`) once; importing the module defines nothing, so a page
 * chooses the tag. Returns the class.
 */
export function defineChattyApprovals(name = 'chatty-approvals'): typeof ChattyApprovals {
  if (!customElements.get(name)) customElements.define(name, name === 'chatty-approvals' ? ChattyApprovals : class extends ChattyApprovals {});
  return ChattyApprovals;
}

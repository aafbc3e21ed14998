// The running tasks as live timelines: each task a card with its delegation tree (the root, the
// agent it called, the agents those called), its steps and streamed text, and Cancel.
import { localClock as clock, showExactly, type ChattyBridge, type TaskNode, type TaskUpdate, type TaskView, type TimelineEntry } from '../renderer/index.js';
import { announce, h } from './dom.js';

interface Card {
  view: TaskView;
  root: HTMLElement;
  state: HTMLElement;
  tree: HTMLElement;
  timeline: HTMLOListElement;
  cancel: HTMLButtonElement;
  /** The `<pre>` the last text chunks went to, while no other entry came in between. */
  output: HTMLElement | undefined;
}

const MAX_OUTPUT_CHARS = 256 * 1024;

const STATE_LABEL: Record<TaskView['state'], string> = { running: 'running', completed: 'completed', failed: 'failed', cancelled: 'cancelled' };

export class TaskBoard {
  private readonly cards = new Map<string, Card>();

  constructor(
    private readonly bridge: ChattyBridge,
    private readonly list: HTMLElement,
    private readonly empty: HTMLElement,
    private readonly onNodes: (names: string[]) => void,
  ) {}

  /** Replaces everything with a snapshot's tasks (newest first). */
  load(views: TaskView[]): void {
    this.cards.clear();
    this.list.replaceChildren();
    for (const view of views) this.addCard(view);
    this.refreshEmpty();
  }

  apply(update: TaskUpdate): void {
    if (update.type === 'started') {
      if (!this.cards.has(update.task.taskId)) this.addCard(update.task);
      this.refreshEmpty();
      return;
    }
    const card = this.cards.get(update.taskId);
    if (!card) return;
    if (update.type === 'entry') {
      card.view.entries.push(update.entry);
      this.appendEntry(card, update.entry);
    } else if (update.type === 'node') {
      card.view.nodes.push(update.node);
      this.drawTree(card);
      this.onNodes(this.nodeNames());
    } else {
      card.view.state = update.state;
      if (update.error !== undefined) card.view.error = update.error;
      this.drawState(card);
      announce(`${card.view.taskId} ${update.state}`);
    }
  }

  nodeNames(): string[] {
    return [...this.cards.values()].flatMap((c) => c.view.nodes.map((n) => n.name)).filter((n) => !n.includes(' '));
  }

  private refreshEmpty(): void {
    this.empty.hidden = this.cards.size > 0;
  }

  private addCard(view: TaskView): void {
    const titleId = `${view.taskId}-title`;
    const state = h('span', { className: 'state' });
    const cancel = h('button', { className: 'cancel', attrs: { type: 'button', 'aria-describedby': titleId } }, 'Cancel');
    const tree = h('div', { className: 'tree', attrs: { 'aria-label': 'delegation tree', role: 'group' } });
    const timeline = h('ol', { className: 'timeline', attrs: { 'aria-label': 'timeline' } });
    const root = h(
      'article',
      { className: 'task', attrs: { 'data-task-id': view.taskId, 'aria-labelledby': titleId } },
      h('header', { className: 'task-head' }, h('h3', { attrs: { id: titleId } }, `${view.agent} `, h('span', { className: 'muted' }, `${view.taskId} · ${clock(view.startedAt)}`)), state, cancel),
      h('pre', { className: 'prompt', attrs: { tabindex: '0' } }, view.prompt),
      tree,
      timeline,
    );
    const card: Card = { view: structuredClone(view), root, state, tree, timeline, cancel, output: undefined };
    cancel.addEventListener('click', () => void this.cancel(card));
    this.cards.set(view.taskId, card);
    this.list.prepend(root);
    for (const entry of card.view.entries) this.appendEntry(card, entry);
    this.drawTree(card);
    this.drawState(card);
    this.onNodes(this.nodeNames());
  }

  private async cancel(card: Card): Promise<void> {
    card.cancel.disabled = true;
    card.cancel.textContent = 'Cancelling…';
    try {
      await this.bridge.cancelTask({ taskId: card.view.taskId });
    } catch (err) {
      announce(`could not cancel: ${(err as Error).message}`);
    }
    this.drawState(card);
  }

  private drawState(card: Card): void {
    const s = card.view.state;
    card.state.textContent = STATE_LABEL[s];
    card.state.className = `state state-${s}`;
    card.root.dataset['state'] = s;
    const running = s === 'running';
    card.cancel.hidden = !running;
    if (running && card.cancel.textContent !== 'Cancelling…') card.cancel.disabled = false;
  }

  private drawTree(card: Card): void {
    const children = (parent: string): TaskNode[] => card.view.nodes.filter((n) => n.parent === parent);
    const branch = (parent: string): HTMLElement | null => {
      const kids = children(parent);
      if (kids.length === 0) return null;
      return h('ul', {}, ...kids.map((n) => h('li', { attrs: { 'data-node': n.name } }, h('span', { className: 'node' }, n.name), branch(n.name))));
    };
    card.tree.replaceChildren(h('ul', {}, h('li', {}, h('span', { className: 'node node-root' }, 'root'), branch('root'))));
  }

  private appendEntry(card: Card, entry: TimelineEntry): void {
    if (entry.kind === 'text' && card.output) {
      const text = (card.output.textContent ?? '') + entry.text;
      // A long stream keeps its tail on screen.
      card.output.textContent = text.length > MAX_OUTPUT_CHARS ? `…${text.slice(text.length - MAX_OUTPUT_CHARS)}` : text;
      return;
    }
    const who = h('span', { className: 'who' }, entry.node ?? '');
    // Streamed output as it came (a bounded box of its own); every other entry through the display rule.
    // The output box scrolls on its own: focusable, so the keyboard scrolls it too.
    const body = entry.kind === 'text' ? h('pre', { className: 'output', attrs: { tabindex: '0' } }, entry.text) : h('span', { className: 'what' }, showExactly(entry.text).text);
    card.timeline.append(h('li', { className: `entry entry-${entry.kind}` }, h('time', {}, clock(entry.at)), who, body));
    card.output = entry.kind === 'text' ? body : undefined;
    if (card.timeline.children.length > 1000) card.timeline.firstElementChild?.remove();
  }
}

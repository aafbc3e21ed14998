// The sidebar's plugin list, kept live: main pushes the whole list after each change (a module
// online, reloaded, unloaded, building, failed, waiting for a grant) and the list is drawn again,
// keeping what the reader had opened. A plugin author's words (names, versions, tool names,
// descriptions, a pending module's reason) go through the display rule.
import { showExactly, type ModuleChangeView, type ModuleSummary, type PendingModuleView } from '../renderer/index.js';
import { announce, h } from './dom.js';

/** How a module that is not served is labelled beside its name. */
const PENDING_LABEL: Record<PendingModuleView['state'], string> = {
  building: 'building…',
  failed: 'failed',
  ungranted: 'waiting for a grant',
};

/** What a change is called when it is announced to screen readers. */
const CHANGE_TEXT: Record<ModuleChangeView['change'], string> = {
  served: 'is online',
  reloaded: 'was reloaded',
  unloaded: 'was unloaded',
  pending: 'is not served',
};

export class PluginList {
  constructor(private readonly box: HTMLElement) {}

  /** Draws `modules` and `pending` in name order; `changes` (from a push) are announced. */
  show(modules: readonly ModuleSummary[], pending: readonly PendingModuleView[], changes: readonly ModuleChangeView[] = []): void {
    const opened = new Set([...this.box.querySelectorAll<HTMLDetailsElement>('details[open]')].map((d) => d.dataset['module']));
    const names = [...new Set([...modules.map((m) => m.name), ...pending.map((p) => p.name)])].sort();
    if (names.length === 0) this.box.replaceChildren(h('p', { className: 'muted' }, 'no plugin loaded'));
    else {
      this.box.replaceChildren(
        ...names.map((name) => {
          const entry = entryFor(name, modules.find((m) => m.name === name), pending.find((p) => p.name === name));
          entry.open = opened.has(name);
          return entry;
        }),
      );
    }
    if (changes.length > 0) announce(changes.map((c) => `plugin ${shown(c.name)} ${c.change === 'pending' ? pendingText(pending, c.name) : CHANGE_TEXT[c.change]}`).join('; '));
  }
}

/** One module: served (its version and tools), pending (its state and reason), or served while a new build is pending. */
function entryFor(name: string, served: ModuleSummary | undefined, pending: PendingModuleView | undefined): HTMLDetailsElement {
  const state = pending && !served ? pending.state : 'served';
  const facts = served ? `${shown(served.version)} · ${served.tools.length} tool${served.tools.length === 1 ? '' : 's'}` : '';
  return h(
    'details',
    { className: `module module-${state}`, attrs: { 'data-module': name, 'data-state': state } },
    h(
      'summary',
      {},
      h('span', { className: 'module-name' }, shown(name)),
      ' ',
      facts ? h('span', { className: 'muted small' }, facts) : null,
      pending ? h('span', { className: `module-state state-${pending.state}` }, PENDING_LABEL[pending.state]) : null,
    ),
    pending?.reason !== undefined ? h('p', { className: `small module-reason reason-${pending.state}` }, shown(pending.reason)) : null,
    served?.description ? h('p', { className: 'muted small' }, shown(served.description)) : null,
    served?.toolsError !== undefined ? h('p', { className: 'error small' }, `tools unavailable: ${shown(served.toolsError)}`) : null,
    served
      ? h('ul', { className: 'tools plain' }, ...served.tools.map((t) => h('li', {}, h('code', {}, shown(t.name)), t.description ? h('span', { className: 'muted small' }, ` ${shown(t.description)}`) : null)))
      : null,
  );
}

/** A plugin author's text as the display rule shows it: hidden and right-to-left characters as `<U+…>`. */
function shown(raw: string): string {
  return showExactly(raw).text;
}

function pendingText(pending: readonly PendingModuleView[], name: string): string {
  const entry = pending.find((p) => p.name === name);
  return entry ? PENDING_LABEL[entry.state] : 'is not served';
}

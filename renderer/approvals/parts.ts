// Small DOM pieces the popover is built from. Everything is made with createElement and
// textContent (no HTML strings, no inline handlers or styles: a page under a strict CSP runs it),
// and every text a worker controls goes through the display rule first.
import type { Asker } from '../../main/app/bridge/contract.js';
import { RIGHT_TO_LEFT_RUN, shownParts } from '../../main/display/index.js';

export type Child = Node | string | null | undefined | false;

export interface ElProps {
  className?: string;
  /** Attributes (`aria-*`, `data-*`, `type`, `id`…); `undefined` leaves one out. */
  attrs?: Record<string, string | undefined>;
  onClick?: (event: MouseEvent) => void;
}

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: ElProps = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  for (const [name, value] of Object.entries(props.attrs ?? {})) if (value !== undefined) node.setAttribute(name, value);
  if (props.onClick) (node as HTMLElement).addEventListener('click', props.onClick);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/** A plain button (`type="button"`: it never submits) with its label and what a click does; `attrs` adds `title` and the like. */
export function button(className: string, label: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  return el('button', { className, attrs: { type: 'button', ...attrs }, onClick }, label);
}

/**
 * A worker's text as the display rule shows it: visible runs as text, each hidden character as
 * its code point in a marked span, so a label stands apart from the same letters typed literally.
 */
export function shown(raw: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of shownParts(raw)) fragment.append(part.hidden ? el('span', { className: 'cp', attrs: { title: 'a hidden character, shown as its code point' } }, part.text) : part.text);
  return fragment;
}

/**
 * A command or a path as the display rule shows it, to be drawn in the order the shell reads it
 * (inside an element of class `in-order`, which overrides the bidi algorithm left to right): each
 * run of right-to-left letters is isolated so it still reads right to left within itself, but the
 * characters between two runs (`/../`, spaces, digits) are never reordered: `cp a.txt א/../ב/` is
 * not drawn `cp a.txt ב/../א/`.
 */
export function shownInOrder(raw: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of shownParts(raw)) {
    if (part.hidden) {
      fragment.append(el('span', { className: 'cp', attrs: { title: 'a hidden character, shown as its code point' } }, part.text));
      continue;
    }
    let from = 0;
    for (const match of part.text.matchAll(RIGHT_TO_LEFT_RUN)) {
      if (match.index > from) fragment.append(part.text.slice(from, match.index));
      fragment.append(el('span', { className: 'rtl-run' }, match[0]));
      from = match.index + match[0].length;
    }
    if (from < part.text.length) fragment.append(part.text.slice(from));
  }
  return fragment;
}

/** `N lines · N chars` of a text as it is (characters are code points). */
export function sizeLine(raw: string): string {
  const lines = raw === '' ? 0 : raw.split('\n').length;
  const chars = [...raw].length;
  return `${lines} line${lines === 1 ? '' : 's'} · ${chars} char${chars === 1 ? '' : 's'}`;
}

/** `14:02:03` in the reader's local time. */
export function localClock(at: number | string): string {
  const d = new Date(at);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** The term/definition pairs of a fact list; a missing definition leaves its pair out. */
export function facts(className: string, pairs: [string, Child][]): HTMLDListElement {
  const list = el('dl', { className: `facts ${className}` });
  for (const [term, definition] of pairs) if (definition !== null && definition !== undefined && definition !== false) list.append(el('dt', {}, term), el('dd', {}, definition));
  return list;
}

/** The chain of roles from the root down to the asker, as an ordered list. */
function chainList(chain: string[]): HTMLOListElement {
  const list = el('ol', { className: 'chain', attrs: { 'aria-label': `chain: ${chain.join(', then ')}` } });
  for (const role of chain) list.append(el('li', {}, shown(role)));
  return list;
}

/** Who asks, as the last facts of every popover: the asking agent, its chain, its task. */
export function askerFacts(asker: Asker, taskId: string | null): [string, Child][] {
  return [
    ['Asked by', el('span', { className: 'asker' }, shown(asker.agent))],
    ['Chain', chainList(asker.chain)],
    ['Task', taskId !== null ? el('span', { className: 'task-id' }, taskId) : null],
  ];
}

/**
 * The "hidden characters" line: `subject` holds characters shown as code points; `after` ends the
 * sentence. Its example is the first one found in `texts` (the texts shown, in the order shown): an
 * example that is not there (`<U+202E>` for a path of combining accents) reads as "this holds U+202E".
 */
export function hiddenWarning(subject: string, texts: readonly string[], after: string): HTMLParagraphElement {
  const first = texts.flatMap(shownParts).find((part) => part.hidden)?.text;
  const example = first !== undefined ? [', like ', el('span', { className: 'cp' }, first)] : [' in a marked box'];
  return el('p', { className: 'hidden-warning' }, el('strong', {}, 'Hidden characters: '), `${subject} holds characters you could not see; each is shown as its code point`, ...example, after);
}

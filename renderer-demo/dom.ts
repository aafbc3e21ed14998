// A few DOM helpers. Everything is built with createElement and textContent: no HTML strings, no
// inline handlers or style attributes (the page's CSP allows neither), so text from agents can
// never become markup.

export type Child = Node | string | null | undefined | false;

export interface Props {
  className?: string;
  /** Attributes (`aria-*`, `data-*`, `type`, `id`…); `undefined` leaves one out. Never `style`. */
  attrs?: Record<string, string | undefined>;
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (name === 'style' || name.startsWith('on')) throw new Error(`h: ${name} is not set from script`);
    if (value !== undefined) el.setAttribute(name, value);
  }
  for (const [type, listener] of Object.entries(props.on ?? {})) {
    el.addEventListener(type, listener as EventListener);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

/** Says `text` to screen readers through the page's live region. */
export function announce(text: string): void {
  const region = document.getElementById('announce');
  if (region) region.textContent = text;
}

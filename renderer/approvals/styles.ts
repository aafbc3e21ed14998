// The element's own styles, as a constructable stylesheet adopted by its shadow root: nothing for
// the page to link, and allowed under a CSP of `style-src 'self'` (no inline <style>). Colours
// follow the reader's light or dark preference; a page may set the --chatty-* properties.

const CSS = `
:host {
  display: inline-flex; align-items: center; gap: 0.6rem; min-width: 0;
  --fg: var(--chatty-fg, #1d2126); --bg: var(--chatty-bg, #ffffff); --muted: var(--chatty-muted, #59616b);
  --line: var(--chatty-line, #c9ced4); --panel: var(--chatty-panel, #f5f6f8);
  --accent: var(--chatty-accent, #1f5fbf); --accent-fg: #ffffff;
  --bad: var(--chatty-bad, #a8231d); --bad-bg: var(--chatty-bad-bg, #fdecea);
  --warn: #8a4b00; --warn-bg: #fff4e0; --cp-fg: #5c3b00; --cp-bg: #ffe9a8;
  --mono: ui-monospace, 'DejaVu Sans Mono', monospace;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :host {
    --fg: var(--chatty-fg, #e6e8eb); --bg: var(--chatty-bg, #1b1e22); --muted: var(--chatty-muted, #a9b1bb);
    --line: var(--chatty-line, #444b54); --panel: var(--chatty-panel, #24282d);
    --accent: var(--chatty-accent, #2f6bcc);
    --bad: var(--chatty-bad, #ff9b91); --bad-bg: var(--chatty-bad-bg, #3a1d1b);
    --warn: #f3bd68; --warn-bg: #3a2a10; --cp-fg: #ffe08a; --cp-bg: #4a3800;
  }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.muted { color: var(--muted); }
button, input { font: inherit; color: inherit; }
button { border: 1px solid var(--muted); background: var(--bg); color: var(--fg); border-radius: 4px; padding: 0.3rem 0.75rem; cursor: pointer; }
button:hover { background: var(--panel); }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
button.deny { border-color: var(--bad); color: var(--bad); }
button.deny.primary { background: #a8231d; border-color: #a8231d; color: #ffffff; }
button[aria-disabled="true"] { border-style: dashed; }
:focus-visible { outline: 3px solid #f0a400; outline-offset: 1px; }
input { border: 1px solid var(--muted); border-radius: 4px; padding: 0.25rem 0.4rem; background: var(--bg); color: var(--fg); }

.bar { display: flex; align-items: center; gap: 0.6rem; min-width: 0; }
.waiting { background: #8a4b00; border-color: #8a4b00; color: #ffffff; font-weight: 600; white-space: nowrap; }
.waiting:hover { background: #6e3c00; }
.trace { margin: 0; font-size: 0.8rem; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; min-width: 0; }
.trace time { font-family: var(--mono); }

dialog {
  width: min(580px, calc(100vw - 1.5rem)); max-height: calc(100vh - 1.5rem); padding: 0;
  border: 1px solid var(--line); border-top: 5px solid var(--accent); border-radius: 8px;
  color: var(--fg); background: var(--bg); box-shadow: 0 12px 32px #0006;
  font-family: system-ui, sans-serif; font-size: 14px;
}
dialog[open] { display: flex; flex-direction: column; }
dialog::backdrop { background: #1d212680; }
dialog[data-kind="approval"] { border-top-color: var(--warn); }
dialog[data-kind="grant"] { border-top-color: var(--bad); }
.asks { margin: 0.3rem 0 0.5rem; padding-left: 1.2rem; display: flex; flex-direction: column; gap: 0.25rem; }
.asks li { overflow-wrap: anywhere; }
/* A hostile request cannot push the digest or the buttons out of view: the list, the version and the head are bounded boxes. */
.asks { max-height: 11em; overflow: auto; }
.plugin-version { display: inline-block; max-width: 14em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; }
.facts .version { display: block; max-height: 3em; overflow: auto; }
.asks .detail, .digest, .digest-short { font-family: var(--mono); font-size: 0.85rem; }
.asks .detail { white-space: pre-wrap; }
.digest { overflow-wrap: anywhere; }
.grant-note { font-size: 0.8rem; }
button.grant { border-color: var(--accent); color: var(--accent); }
dialog[data-danger="true"] { border: 2px solid var(--bad); border-top: 8px solid var(--bad); }
.head { flex: none; padding: 0.8rem 1.1rem 0.3rem; }
h2 { font-size: 1.05rem; margin: 0 0 0.2rem; }
h2:focus { outline: none; }
.head p { margin: 0.25rem 0; overflow-wrap: anywhere; }
.danger-line { background: var(--bad-bg); color: var(--bad); border-radius: 4px; padding: 0.25rem 0.5rem; }
.replaced-note { background: var(--warn-bg); color: var(--warn); border-radius: 4px; padding: 0.25rem 0.5rem; max-height: 4.5em; overflow: auto; }
.hidden-warning { background: var(--warn-bg); color: var(--warn); border-radius: 4px; padding: 0.25rem 0.5rem; }
.body { flex: 1 1 auto; min-height: 4.5rem; overflow: auto; padding: 0.2rem 1.1rem 0.4rem; overscroll-behavior: contain; }
.foot { flex: none; padding: 0.4rem 1.1rem 0.7rem; border-top: 1px solid var(--line); }
.foot p { margin: 0.2rem 0; }
.subject {
  margin: 0; max-height: 9.5em; overflow: auto; white-space: break-spaces; overflow-wrap: anywhere;
  font-family: var(--mono); font-size: 0.85rem; background: #1d2126; color: #f5f6f8; padding: 0.35rem 0.5rem; border-radius: 4px; border: 1px solid var(--line);
}
.subject .cp { color: #1d2126; background: #ffd866; border-color: #ffd866; }
.size { margin: 0.15rem 0 0.3rem; font-size: 0.8rem; }
.cp { font-family: var(--mono); font-size: 0.85em; color: var(--cp-fg); background: var(--cp-bg); border: 1px solid var(--cp-fg); border-radius: 3px; padding: 0 0.15em; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 0.8rem; margin: 0.4rem 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; min-width: 0; }
.outside { color: var(--bad); }
.diffstat { font-style: italic; }
.diffstat::before { content: '“'; }
.diffstat::after { content: '”'; }
.chain { display: flex; flex-wrap: wrap; list-style: none; margin: 0; padding: 0; font-family: var(--mono); font-size: 0.85rem; }
.chain li + li::before { content: '→'; margin: 0 0.35rem; color: var(--muted); }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0.5rem 0; padding: 0.4rem 0.7rem 0.6rem; display: flex; flex-direction: column; gap: 0.35rem; min-width: 0; }
legend { font-weight: 600; padding: 0 0.3rem; overflow-wrap: anywhere; max-width: 100%; }
.options { display: flex; flex-wrap: wrap; gap: 0.35rem; }
.option { overflow-wrap: anywhere; max-width: 100%; text-align: left; }
.option[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
/* An option is a choice, not an action: a mark of its own, a dotted border, so "Approve once" as an option never looks like the approval's button. */
.option { border-style: dotted; border-radius: 1rem; }
.option::before { content: '○'; margin-right: 0.4em; }
.option[aria-pressed="true"]::before { content: '●'; }
/* Floated, a legend is drawn inside its box like any block: a question of several lines stays in one frame. */
.question-text { white-space: pre-wrap; float: left; width: 100%; padding: 0; }
.question-note { font-size: 0.85rem; background: var(--panel); border-radius: 4px; padding: 0.25rem 0.5rem; }
.match { display: flex; gap: 0.4rem; align-items: baseline; overflow-wrap: anywhere; }
.match code { font-family: var(--mono); }
.match code.exact { display: inline-block; max-height: 4.5em; overflow: auto; vertical-align: top; }
.error { color: var(--bad); font-weight: 600; overflow-wrap: anywhere; max-height: 6em; overflow: auto; }
.guard { color: var(--muted); font-size: 0.8rem; }
.queue { overflow-wrap: anywhere; max-height: 3em; overflow: auto; }
dialog[data-armed="false"] .actions-slot button { border-style: dashed; cursor: wait; }
.actions-slot .actions, .actions-slot { display: flex; flex-wrap: wrap; justify-content: flex-end; gap: 0.45rem; align-items: center; }
.actions-slot fieldset { flex: 1 1 100%; }
.later { margin-right: auto; }
.in-order { unicode-bidi: bidi-override; direction: ltr; }
/* What runs or is written, with every space taking its room and wrapping (not hung at a line's end, not collapsed): 2,000 spaces are drawn as a terminal draws them. */
.in-order { white-space: break-spaces; }
.in-order .rtl-run { unicode-bidi: isolate; direction: rtl; }
.unread-note { flex: 1 1 100%; margin: 0; font-size: 0.8rem; background: var(--warn-bg); color: var(--warn); border-radius: 4px; padding: 0.25rem 0.5rem; }
.actions-slot button:disabled { opacity: 0.55; cursor: not-allowed; }
.hint { font-size: 0.78rem; }
`;

let sheet: CSSStyleSheet | undefined;

/** The one stylesheet every <chatty-approvals> adopts. */
export function approvalsSheet(): CSSStyleSheet {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
  }
  return sheet;
}

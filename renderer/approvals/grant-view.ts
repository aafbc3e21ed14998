// What a plugin's capability request shows: the plugin, its version and the digest of the build
// it is for, what it asks for (one ask a line), and two choices: Deny · Grant. A grant is
// remembered for that digest only (a rebuilt plugin that asks for more asks again); Deny leaves the
// plugin unserved until it is granted (`chatty-gateway plugin grant NAME`).
import { hasHidden } from '../../main/display/index.js';
import type { AnswerGrant, CapabilityAsk, PendingGrant } from '../../main/app/bridge/contract.js';
import { button, el, facts, hiddenWarning, shown } from './parts.js';
import type { PopoverContent, ViewContext } from './view.js';

export type GrantAnswer = AnswerGrant['decision'];

/** How each capability reads in the list, before the plugin's own words for it. */
export const CAPABILITY_LABEL: Readonly<Record<CapabilityAsk['capability'], string>> = {
  file: 'Files',
  network: 'Network',
  llm: 'Language model',
  billing: 'Billing',
};

/** Up to this many asks are read at a glance; a longer list is counted in the line under the title. */
const GLANCE = 8;

/** A version as a version reads: letters, digits and `. + _ -`. */
const PLAIN_VERSION = /^[0-9A-Za-z.+_-]{1,40}$/;

export function grantContent(view: PendingGrant, context: ViewContext<GrantAnswer>): PopoverContent {
  const texts = [view.plugin, view.version, view.digest, view.dir ?? '', ...view.asks.map((a) => a.detail)];
  const hidden = texts.some(hasHidden);
  const asks = el('ul', { className: 'asks', attrs: { 'aria-label': 'what it asks for' } });
  for (const ask of view.asks) {
    const reach = ask.reach ? el('span', { className: 'reach muted' }, ` (${ask.reach})`) : null;
    asks.append(el('li', { attrs: { 'data-capability': ask.capability } }, el('strong', { className: 'capability' }, `${CAPABILITY_LABEL[ask.capability] ?? ask.capability}: `), el('span', { className: 'detail' }, shown(ask.detail)), reach));
  }
  // A list longer than a glance says how long it is where it is seen first, above the fold.
  const count = view.asks.length > GLANCE ? ` ${view.asks.length.toLocaleString('en')} things` : '';
  // A version is the author's words: one that is not a plain token ("0.3.1 (sha256:…)") is shown between ⟦ ⟧, so it cannot pass for the digest after it.
  const versionSpan = el('span', { className: 'plugin-version' }, shown(view.version));
  const version = PLAIN_VERSION.test(view.version) ? [versionSpan] : ['⟦', versionSpan, '⟧'];
  return {
    kind: 'grant',
    title: 'Grant this plugin what it asks for?',
    desc: [
      el('span', { className: 'plugin-name' }, shown(view.plugin)),
      ' ',
      ...version,
      ' (',
      el('code', { className: 'digest-short' }, shown(view.digestShort)),
      `) asks for${count}:`,
    ],
    warnings: hidden ? [hiddenWarning("the plugin's request", texts, '.')] : [],
    body: [
      asks,
      facts('context', [
        ['Plugin', el('span', { className: 'plugin' }, shown(view.plugin))],
        ['Version', el('span', { className: 'version' }, shown(view.version))],
        ['Folder', view.dir !== undefined ? el('code', { className: 'folder' }, shown(view.dir)) : null],
        ['Digest', el('code', { className: 'digest' }, shown(view.digest))],
      ]),
      el('p', { className: 'grant-note muted' }, 'A grant is kept for this build (its digest) only: a changed plugin asks again. Denied, the plugin is not served; grant it later with ', el('code', {}, 'chatty-gateway plugin grant '), el('code', {}, shown(view.plugin)), '.'),
    ],
    // Neither is the default: the person reads the list and chooses.
    actions: () => [button('later', 'Later', () => context.later()), button('deny', 'Deny', () => context.decide('denied')), button('grant', 'Grant', () => context.decide('granted'))],
    danger: false,
    hidden,
  };
}

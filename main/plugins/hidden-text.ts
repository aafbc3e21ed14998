import { codePointLabel, firstHidden } from '../display/index.js';

/**
 * Why `text` a plugin wrote for a model to read (a tool's description, the module's) may not be
 * served: `holds <U+E0041> at character 8, which a reader cannot see`, or `undefined` when every
 * character is one a person sees as it is. Tag characters spell ASCII a model reads and no font
 * draws ("ASCII smuggling"), zero-width characters carry bits, a bidi override reorders what the
 * person reads: the display rule's hidden characters (main/display), not its look-alikes (prose
 * in Greek or Cyrillic is what it says). Line breaks and tabs are structure, kept.
 */
export function hiddenIn(text: string): string | undefined {
  const hidden = firstHidden(text);
  if (hidden === undefined) return undefined;
  const at = [...text.slice(0, hidden.index)].length + 1;
  return `holds ${codePointLabel(hidden.char)} at character ${at}, which a reader cannot see (an invisible or reordering character: write the text without it)`;
}

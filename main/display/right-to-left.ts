/**
 * Letters of the right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko…, their presentation
 * forms and the historic ones). They are visible, so the display rule shows them as they are, but
 * a renderer that applies the bidi algorithm (a browser; a terminal such as GNOME Terminal or
 * Konsole) draws the neutral characters between two of them (`/../`, spaces, digits) in another
 * order than they run: `cp a.txt א/../ב/` drawn `cp a.txt ב/../א/`. No Node imports.
 */
export const RIGHT_TO_LEFT_RUN = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]+/gu;

/** Whether `raw` holds a right-to-left letter. */
export function hasRightToLeft(raw: string): boolean {
  return raw.search(RIGHT_TO_LEFT_RUN) >= 0;
}

/**
 * The display rule: how text a worker controls is shown to the person who approves or answers
 * it, in the terminal and in the renderer alike. No Node imports (the browser loads it).
 */
export { showExactly, hasHidden, firstHidden, hiddenCharacters, shownParts, codePointLabel, replaceHidden } from './show-exactly.js';
export type { ShownText, ShownPart } from './show-exactly.js';
export { GUARD_MS, REPLACED_GUARD_TIMES } from './guard-time.js';
export { hasRightToLeft, RIGHT_TO_LEFT_RUN } from './right-to-left.js';

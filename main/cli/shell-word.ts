/** The CLI's printed commands quote paths by the shell's rule, which lives in its own room. */
export { shellWord } from '../shell/shell-word.js';

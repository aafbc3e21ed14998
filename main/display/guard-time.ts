/**
 * How long (ms) a request shown to a person takes no answer after it appears (or its content
 * changes): a click, a key or a line that was on its way for something else — a double click, a
 * `y` typed for the previous prompt, a paste, Enter held down — lands in this window and is
 * dropped, not taken as the answer to what the person has not read yet. Both roots use it: the
 * renderer popover (`<chatty-approvals>`) and `serve`'s terminal prompt.
 */
export const GUARD_MS = 600;

/**
 * How many guard times a request waits for its first answer when it takes the place of one that
 * was withdrawn while shown (a swap the person did not make: a worker showed one request, waited
 * for the person to reach Approve or type `y`, and withdrew it with another queued behind).
 */
export const REPLACED_GUARD_TIMES = 3;

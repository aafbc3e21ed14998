// What a popover's content gives the element, and what the element gives it back.

/** The parts of one popover, laid out by the element: head (title, asker, warnings), body (scrolls), actions (always in view). */
export interface PopoverContent {
  kind: 'approval' | 'question' | 'grant';
  title: string;
  /** Who asks, one line under the title. */
  desc: (Node | string)[];
  /** The "danger" and "hidden characters" lines, under the title. */
  warnings: Node[];
  body: Node[];
  /** The action row (a fresh one each time it is shown). */
  actions: () => Node[];
  danger: boolean;
  hidden: boolean;
  /** Called once the popover is open and laid out, scrolled to the top (what can only be measured then). */
  shown?: () => void;
}

/** What a content's buttons call; every call is ignored while the guard holds or an answer is on its way. */
export interface ViewContext<Answer> {
  /** Sends the answer for this request (once). */
  decide(answer: Answer): void;
  /** Puts the request off: it keeps waiting, behind the others. */
  later(): void;
  /** Replaces the action row (the confirm step, or back) and arms the guard again. */
  swapActions(nodes: Node[]): void;
  /** Shows an error in the popover (it stays open). */
  error(text: string): void;
  /** Whether the guard time has passed: a choice made before it is ignored. */
  armed(): boolean;
}

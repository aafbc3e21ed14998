// What a question popover shows: each question with its options (choosing one only selects it;
// each drawn as a choice, ○ / ●, never like the approval's action buttons) and a free-text
// answer, then Send: choosing and sending are separate acts. It says that an answer approves nothing. Every label is the
// worker's text through the display rule; what is sent is the option as the worker wrote it.
import { hasHidden } from '../../main/display/index.js';
import type { ANSWER_LIMITS, AnswerQuestion, PendingQuestion } from '../../main/app/bridge/contract.js';
import { askerFacts, button, el, facts, hiddenWarning, shown } from './parts.js';
import type { PopoverContent, ViewContext } from './view.js';

export type QuestionAnswer = AnswerQuestion['answers'];

/** The longest answer main takes. Written here (the contract module loads zod); its type is the contract's literal, so the compiler checks they agree. */
const MAX_ANSWER_CHARS: (typeof ANSWER_LIMITS)['answerChars'] = 16384;

export function questionContent(view: PendingQuestion, context: ViewContext<QuestionAnswer>): PopoverContent {
  const single = view.questions.length === 1;
  const texts = [...view.questions.flatMap((q) => [q.question, ...q.options]), view.asker.agent];
  const hidden = texts.some(hasHidden);
  const chosen = new Map<string, { answer: string; custom: boolean }>();
  const sends: HTMLButtonElement[] = [];
  const refresh = (): void => {
    const ready = view.questions.every((q) => (chosen.get(q.id)?.answer ?? '') !== '');
    for (const send of sends) send.setAttribute('aria-disabled', String(!ready));
  };

  const fieldsets = view.questions.map((q, i) => {
    const free = el('input', { className: 'free', attrs: { id: `free-${i}`, type: 'text', autocomplete: 'off', maxlength: String(MAX_ANSWER_CHARS) } });
    const options = q.options.map((option) =>
      el(
        'button',
        {
          className: 'option',
          attrs: { type: 'button', 'aria-pressed': 'false' },
          onClick: (event) => {
            if (!context.armed()) return;
            chosen.set(q.id, { answer: option, custom: false });
            free.value = '';
            for (const b of options) b.setAttribute('aria-pressed', String(b === event.currentTarget));
            refresh();
          },
        },
        shown(option),
      ),
    );
    free.addEventListener('input', () => {
      if (free.value.trim() === '') chosen.delete(q.id);
      else chosen.set(q.id, { answer: free.value, custom: true });
      for (const b of options) b.setAttribute('aria-pressed', 'false');
      refresh();
    });
    free.addEventListener('keydown', (event) => {
      // Enter in a field the person typed in sends, as a form would; never an option's click.
      if (event.key === 'Enter' && free.value.trim() !== '') {
        event.preventDefault();
        send();
      }
    });
    return el(
      'fieldset',
      { className: 'question' },
      el('legend', { className: 'question-text' }, shown(q.question)),
      options.length > 0 ? el('div', { className: 'options', attrs: { role: 'group', 'aria-label': 'options' } }, ...options) : null,
      el('label', { attrs: { for: `free-${i}` } }, options.length > 0 ? 'Or your own answer' : 'Your answer'),
      free,
    );
  });

  const send = (): void => {
    const answers = view.questions.map((q) => ({ id: q.id, answer: chosen.get(q.id)?.answer ?? '', custom: chosen.get(q.id)?.custom ?? false }));
    const missing = answers.findIndex((a) => a.answer === '');
    if (missing >= 0) return context.error(single ? 'Choose an option or write an answer first.' : `Question ${missing + 1} has no answer yet.`);
    // The limit main enforces, checked before sending: an option can be longer than an answer may be.
    const long = answers.findIndex((a) => a.answer.length > MAX_ANSWER_CHARS);
    if (long >= 0) return context.error(`The answer to question ${long + 1} is ${answers[long]!.answer.length} characters; an answer may have at most ${MAX_ANSWER_CHARS}.`);
    context.decide(answers);
  };

  return {
    kind: 'question',
    title: 'A question for you',
    desc: [el('span', { className: 'asker-name' }, shown(view.asker.agent)), single ? ' asks. Choose an option or write your own answer, then send.' : ' asks. Answer each question, then send.'],
    // A question can be dressed as an approval ("Run this?" with options "Approve once", "Deny"): said plainly what an answer is.
    warnings: [
      el('p', { className: 'question-note' }, el('strong', {}, "The agent's own words. "), 'Your answer is sent back to it and approves nothing: a command it runs or a file it writes is asked for on its own.'),
      ...(hidden ? [hiddenWarning('this question', texts, '.')] : []),
    ],
    body: [...fieldsets, facts('context', askerFacts(view.asker, view.taskId))],
    actions: () => {
      const sendButton = button('send primary', single ? 'Send answer' : 'Send answers', () => send());
      sends.splice(0, sends.length, sendButton);
      refresh();
      return [button('later', 'Later', () => context.later()), sendButton];
    },
    danger: false,
    hidden,
  };
}

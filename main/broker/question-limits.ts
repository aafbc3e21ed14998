import type { QuestionRequest } from '../fabric/wire/payloads.js';

/**
 * What a `human.ask` may hold: what a person can be shown and answer (the desktop's answer
 * channel takes at most 64 answers with ids of at most 200 characters).
 */
export const QUESTION_LIMITS = {
  /** Questions in one `human.ask`: at least one. */
  questions: 64,
  /** A question's id: non-empty, unique within the ask. */
  idChars: 200,
  /** A question's text: non-empty. */
  textChars: 16 * 1024,
  options: 32,
  optionChars: 1024,
  originChars: 2048,
} as const;

/** Why `request` cannot be put to a person, or undefined when it can. */
export function checkQuestionRequest(request: QuestionRequest): string | undefined {
  const L = QUESTION_LIMITS;
  const n = request.questions.length;
  if (n === 0) return 'a human.ask must hold at least one question';
  if (n > L.questions) return `a human.ask holds at most ${L.questions} questions, not ${n}`;
  if (request.origin !== undefined && request.origin.length > L.originChars) return `an origin is at most ${L.originChars} characters`;
  const ids = new Set<string>();
  for (const [i, q] of request.questions.entries()) {
    const which = `question ${i + 1}`;
    if (q.id === '') return `${which} has an empty id`;
    if (q.id.length > L.idChars) return `${which}'s id is longer than ${L.idChars} characters`;
    if (ids.has(q.id)) return `${which}'s id ${JSON.stringify(q.id)} is used twice`;
    ids.add(q.id);
    if (q.question.trim() === '') return `${which} has no text`;
    if (q.question.length > L.textChars) return `${which}'s text is longer than ${L.textChars} characters`;
    if (q.options.length > L.options) return `${which} has more than ${L.options} options`;
    const long = q.options.findIndex((o) => o.length > L.optionChars);
    if (long >= 0) return `${which}'s option ${long + 1} is longer than ${L.optionChars} characters`;
    if (q.options.some((o) => o.trim() === '')) return `${which} has an empty option`;
  }
  return undefined;
}

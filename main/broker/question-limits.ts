import type { Answer, QuestionRequest } from '../fabric/wire/payloads.js';

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
  /** An answer's text, as the desktop's answer channel takes it (`MAX_ANSWER_CHARS`, main/app/bridge/contract.ts). */
  answerChars: 16 * 1024,
  /**
   * An answer's text as it travels to the asker: JSON-escaped UTF-8 bytes, quotes included. 16 K
   * characters of any text a person types stay under it (3 bytes a character at most, 2 for `"`,
   * `\\` or a newline); a control character or a lone surrogate is 6 (`\u0001`), so 16 K of
   * those would be 96 KiB.
   */
  answerBytes: 64 * 1024,
  /** All the answers to one `human.ask`, as the asker's wire carries them (the JSON array's bytes). */
  answersBytes: 256 * 1024,
} as const;

/** What `value` costs on the wire: the bytes of its JSON text. */
function wireBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

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
  // Every ask put to a person can be answered with the options it offers: picked, they are held to
  // the answers' own limit (`checkRelayedAnswers`), and 64 options of 1,024 control characters
  // (6 KiB each escaped) are over it, so the person who picked them was told to answer more briefly.
  const picked = request.questions.map((q) => ({ id: q.id, answer: longestOnTheWire(q.options), custom: false }));
  const bytes = wireBytes(picked);
  if (bytes > L.answersBytes) return `the options, picked, would be ${bytes} bytes on the wire as answers, more than ${L.answersBytes}: offer shorter options`;
  return undefined;
}

/** The option that costs the most on the wire ('' when there are none: the answer is typed). */
function longestOnTheWire(options: readonly string[]): string {
  let longest = '';
  let most = wireBytes(longest);
  for (const option of options) {
    const bytes = wireBytes(option);
    if (bytes > most) [longest, most] = [option, bytes];
  }
  return longest;
}

/**
 * Why `answers`, a worker's answer to a question relayed to it, cannot be handed to the asker, or
 * undefined when it can. A worker answers what a person could: one answer per question asked (by
 * its id), each at most `answerChars` characters and `answerBytes` bytes as the asker's wire carries
 * it, and all of them at most `answersBytes`: what waits for an asker that stopped reading is held
 * by what it costs there, not by what was typed (a control character is 1 character, 6 bytes).
 * Unchecked, a caller answered with up to a frame
 * (33 MiB) per question, and its asker's answers waited for room in the broker while the asker
 * did not read: 4 questions pending per asker, every worker of the gateway an asker.
 */
export function checkRelayedAnswers(questions: QuestionRequest['questions'], answers: readonly Answer[]): string | undefined {
  const asked = new Set(questions.map((q) => q.id));
  const answered = new Set<string>();
  for (const [i, a] of answers.entries()) {
    const which = `answer ${i + 1}`;
    if (!asked.has(a.id)) return `${which} names ${JSON.stringify(a.id.slice(0, QUESTION_LIMITS.idChars))}, which was not asked`;
    if (answered.has(a.id)) return `${which} answers ${JSON.stringify(a.id)} a second time`;
    answered.add(a.id);
    if (a.answer.length > QUESTION_LIMITS.answerChars) return `${which} is longer than ${QUESTION_LIMITS.answerChars} characters`;
    const bytes = wireBytes(a.answer);
    if (bytes > QUESTION_LIMITS.answerBytes) return `${which} is ${bytes} bytes on the wire, more than ${QUESTION_LIMITS.answerBytes}`;
  }
  const bytes = wireBytes(answers);
  if (bytes > QUESTION_LIMITS.answersBytes) return `the answers are ${bytes} bytes on the wire, more than ${QUESTION_LIMITS.answersBytes}`;
  return undefined;
}

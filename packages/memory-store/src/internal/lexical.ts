import { words } from './text.js';

// What the full-text lane reads from a question and from a stored entry beyond
// its words: function words to leave out of the match, the kind of question
// (asking when, asking who), and the header of a transcript line
// (`[<date>] <speaker>: <text>`, how conversation turns are usually stored).

// English function words and question words. They hold no topic; ORed into the
// match they only pull in entries that share nothing else with the question.
const STOPWORDS = new Set(
  (
    'a about after again all also am an and any are as at be been before being both but by can could ' +
    'did do does doing done during each else ever for from get got had has have having he her here hers ' +
    'him his how i if in into is it its just kind like me might more most much must my no nor not now of ' +
    'off on once one only or other our ours out over own please same shall she should so some such than ' +
    'that the their theirs them then there these they this those through to too under until up upon us ' +
    'very was way we were what whatever when where whether which while who whom whose why will with ' +
    'would yet you your yours aren couldn didn doesn don hadn hasn haven isn shouldn wasn weren won wouldn'
  ).split(' '),
);

/** True for an English function or question word. */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/** The distinct topic words of a question: its words without function words (all of them if none is left). */
export function topicWords(question: string): string[] {
  const all = [...new Set(questionWords(question))];
  const kept = all.filter((word) => !STOPWORDS.has(word) && !/^\d{1,2}$/.test(word));
  return (kept.length > 0 ? kept : all).slice(0, 32);
}

/**
 * The words of a question with possessives and contractions split off
 * ("Gina's" is Gina, "didn't" did and n't): a quoted FTS5 phrase "gina's"
 * would only match the possessive, never the name alone.
 */
export function questionWords(question: string): string[] {
  return words(question)
    .flatMap((word) => word.split(/['\u2019]/))
    .filter((word) => word.length > 1 || /\d/.test(word));
}

/** True when the question asks for a time ("when", "what year", "how long ago", ...). */
export function asksWhen(question: string): boolean {
  return /\b(when|what (year|month|day|date|time)|which (year|month|day|date)|how long ago)\b/i.test(
    question,
  );
}

// Words and forms that anchor an event in time: relative days and periods,
// month and day names, years, dates.
const TIME_EXPRESSION = new RegExp(
  [
    '\\b(yesterday|today|tonight|tomorrow|ago|recently|lately|earlier|since)\\b',
    '\\b(last|next|this|past|coming) (week|weekend|month|year|summer|winter|spring|fall|autumn|night|time|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\\b',
    '\\b(january|february|march|april|may|june|july|august|september|october|november|december)\\b',
    '\\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\\b',
    '\\b(1[89]|20)\\d\\d\\b',
    '\\b\\d{1,2}[./-]\\d{1,2}([./-]\\d{2,4})?\\b',
  ].join('|'),
  'i',
);

/** True when `text` anchors something in time. */
export function mentionsTime(text: string): boolean {
  return TIME_EXPRESSION.test(text);
}

/** The parts of a transcript line: `[<date>] <speaker>: <text>`. */
export interface TranscriptLine {
  /** The bracketed date or time, as written. */
  date: string | undefined;
  /** The speaker's name, lower-cased. */
  speaker: string | undefined;
  /** The text after the header. */
  text: string;
}

// A speaker is a name of at most four words before a colon ("Mary Ann: ..."),
// not a sentence that happens to contain one.
const HEADER =
  /^\s*(?:\[([^\]\n]{1,80})\]\s*)?(?:([\p{L}\p{M}][\p{L}\p{M}\p{N}.'\u2019-]{0,23}(?: [\p{L}\p{M}\p{N}.'\u2019-]{1,24}){0,3}):\s)?/u;

/** Splits a stored entry into its transcript header (when it has one) and its text. */
export function transcriptLine(content: string): TranscriptLine {
  const match = HEADER.exec(content);
  if (match === null || match[0].length === 0) return { date: undefined, speaker: undefined, text: content };
  return {
    date: match[1]?.trim(),
    speaker: match[2]?.trim().toLowerCase(),
    text: content.slice(match[0].length),
  };
}

/** The speaker's name words that the question mentions (a question about what someone said or did). */
export function namesSpeaker(questionWords: Set<string>, speaker: string | undefined): boolean {
  if (speaker === undefined) return false;
  return words(speaker).some((word) => questionWords.has(word));
}

// A name written as a possessor ("Caroline's decision") or after a preposition ("to Melanie",
// "with Jon") stands in the question as what is talked about or to, not as who speaks;
// "according to Gina" names who speaks (then the only one asked about).
const SIDE_ROLE =
  /(?<!\baccording )\b(?:to|with|about|from|for|at|of|by)\s+([\p{L}\p{M}][\p{L}\p{M}\p{N}-]*)|([\p{L}\p{M}][\p{L}\p{M}\p{N}-]*)['\u2019]s\b/giu;

const ACCORDING = /\baccording to\s+([\p{L}\p{M}][\p{L}\p{M}\p{N}-]*)/iu;

/**
 * Of the speakers a question names, the ones it asks about as speaking: when it names several,
 * a name it only holds as a possessor or after a preposition is left out ("What does Melanie
 * think about Caroline's decision?" asks for Melanie's turns), unless that leaves none; of
 * several still left, the first named is the subject ("What does Jon tell Gina?"), unless the
 * question asks about them together ("Jon and Gina", "both").
 */
export function speakersAsked(question: string, speakers: Iterable<string>): Set<string> {
  const asked = new Set(questionWords(question));
  const named = [...new Set(speakers)].filter((speaker) => namesSpeaker(asked, speaker));
  if (named.length < 2) return new Set(named);
  const source = ACCORDING.exec(question)?.[1]?.toLowerCase();
  const cited = named.filter((speaker) => source !== undefined && words(speaker).includes(source));
  if (cited.length > 0) return new Set(cited);
  // Every mention of a name as a subject or object: one in a side role counts for nothing.
  const side = new Map<string, number>();
  for (const match of question.matchAll(SIDE_ROLE)) {
    const word = (match[1] ?? match[2])!.toLowerCase();
    side.set(word, (side.get(word) ?? 0) + 1);
  }
  const mentions = (word: string) =>
    questionWords(question).filter((asked) => asked === word).length - (side.get(word) ?? 0);
  const speaking = named.filter((speaker) => words(speaker).some((word) => mentions(word) > 0));
  const sequence = questionWords(question);
  if (speaking.length < 2 || together(sequence, speaking))
    return new Set(speaking.length > 0 ? speaking : named);
  // Several left, not asked about together: a question puts its subject first ("What does
  // Jon tell Gina?"), the others are who is spoken to or about.
  const first = (speaker: string) =>
    Math.min(
      ...words(speaker)
        .map((word) => sequence.indexOf(word))
        .filter((at) => at >= 0),
    );
  return new Set([speaking.reduce((best, speaker) => (first(speaker) < first(best) ? speaker : best))]);
}

/**
 * True when the question asks about the speakers together: two of their names joined by "and"
 * or "or" ("Did Jon and Gina ..."), or "both", "together", "each other".
 */
function together(sequence: string[], speakers: string[]): boolean {
  const names = new Set(speakers.flatMap((speaker) => words(speaker)));
  if (sequence.some((word) => word === 'both' || word === 'together')) return true;
  if (sequence.some((word, at) => word === 'each' && sequence[at + 1] === 'other')) return true;
  return sequence.some(
    (word, at) =>
      (word === 'and' || word === 'or') &&
      names.has(sequence[at - 1] ?? '') &&
      names.has(sequence[at + 1] ?? ''),
  );
}

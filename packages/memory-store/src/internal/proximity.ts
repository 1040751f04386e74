import { isStopword, questionWords, transcriptLine } from './lexical.js';
import { words } from './text.js';

// Term proximity: bm25 scores a bag of words, so a turn holding two of the question's
// topic words far apart in unrelated clauses ranks as one holding them side by side
// ("paint a sunrise" / "painted that lake sunrise"). The share of the question's topic-word
// pairs found close together in an entry's text measures the second. Words are compared by
// a light suffix stripping (plural, past, gerund, adverb), the inflections English adds most.

const WINDOW = 4;

/** A word without its commonest English inflectional suffix. */
export function lightStem(word: string): string {
  const match = /^(.{3,})(?:ing|ed|es|s|ly)$/.exec(word);
  return match === null ? word : match[1]!;
}

/** The stems of a question's topic words (function words left out), distinct. */
export function proximityStems(question: string): string[] {
  const stems = questionWords(question)
    .filter((word) => !isStopword(word) && !/^\d+$/.test(word))
    .map(lightStem);
  return [...new Set(stems)];
}

/**
 * The share of pairs of `stems` that stand within a few words of each other in the
 * entry's text (its transcript header left out), 0 when fewer than two stems are asked.
 */
export function proximityShare(stems: string[], content: string): number {
  if (stems.length < 2) return 0;
  const wanted = new Set(stems);
  const positions = new Map<string, number[]>();
  words(transcriptLine(content).text).forEach((word, position) => {
    const stem = lightStem(word);
    if (!wanted.has(stem)) return;
    const list = positions.get(stem);
    if (list === undefined) positions.set(stem, [position]);
    else list.push(position);
  });
  if (positions.size < 2) return 0;
  let close = 0;
  const found = [...positions.values()];
  for (let i = 0; i < found.length; i++) {
    for (let j = i + 1; j < found.length; j++) {
      if (found[i]!.some((a) => found[j]!.some((b) => Math.abs(a - b) <= WINDOW))) close++;
    }
  }
  return close / ((stems.length * (stems.length - 1)) / 2);
}

import { wordNet } from './wordnet.js';

// Names and what they are: a turn says "I love Bach and Mozart", a question asks which
// composers someone listens to, or whether they would enjoy Vivaldi. WordNet records many
// people, places and works as instances of a class (Bach: composer, organist; Rome: capital),
// so the classes of the names an entry holds are indexed with its words, and the classes of
// the names a question holds are searched with its topic words: the two meet on the class.

const NAME =
  /(?<![\p{L}\p{M}\p{N}'\u2019])\p{Lu}\p{Ll}{2,}(?![\p{L}\p{M}\p{N}])(?!['\u2019](?!s(?!\p{L})))/gu;
// What may stand before the first word of a sentence or quotation.
const OPENING = /(^|[.!?:;"\u201c([])\s*$/u;
const MOST = 16;

/**
 * The capitalised words of `text` inside a sentence, distinct: a capital at the start of one
 * says nothing ("Nice work!" is not the city).
 */
function names(text: string): string[] {
  const out = new Set<string>();
  for (const match of text.matchAll(NAME)) {
    if (!OPENING.test(text.slice(Math.max(0, match.index - 8), match.index))) out.add(match[0]);
    if (out.size === MOST) break;
  }
  return [...out];
}

/**
 * The WordNet classes of the capitalised words inside the sentences of `text` that name an
 * instance, distinct; with `places`, also the places each stands in ("Rome": capital, italy).
 */
export function nameClasses(text: string, places = false): string[] {
  const out = new Set<string>();
  for (const name of names(text)) {
    const word = name.toLowerCase();
    for (const type of wordNet().classes(word)) out.add(type);
    if (places) for (const place of wordNet().places(word)) out.add(place);
  }
  return [...out];
}

import { topicWords } from './lexical.js';
import { wordNet } from './wordnet.js';

// Synonyms of a question's topic words from WordNet, searched as a second query: a question
// asked in other words than the turn that answers it ("internet shop" / "online store").

/**
 * The WordNet synonyms of the question's topic words, without the words themselves; with
 * `derivations`, also the words derived from or to them across parts of speech ("creative":
 * create, creativity), `perWord` more of each.
 */
export function synonymTerms(query: string, senses: number, perWord: number, derivations = false): string[] {
  const asked = topicWords(query);
  const own = new Set(asked);
  const out = new Set<string>();
  for (const word of asked) {
    if (/\d/.test(word)) continue;
    for (const synonym of wordNet().synonyms(word, senses, perWord)) if (!own.has(synonym)) out.add(synonym);
    if (!derivations) continue;
    for (const derived of wordNet().derivations(word, senses, perWord))
      if (!own.has(derived)) out.add(derived);
  }
  return [...out];
}

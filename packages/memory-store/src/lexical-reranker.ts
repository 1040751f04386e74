import { z } from 'zod';
import { parseOptions } from './internal/inputs.js';
import { questionWords, topicWords, transcriptLine } from './internal/lexical.js';
import { words } from './internal/text.js';
import type { Reranker } from './reranker.js';

/** @internal Validates {@link LexicalRerankerOptions}. */
export const lexicalRerankerOptionsSchema = z
  .object({
    coverageWeight: z.number().min(0).max(10).default(0.1),
    proximityWeight: z.number().min(0).max(10).default(0),
    dateWeight: z.number().min(0).max(10).default(0.3),
  })
  .strict();

/** Options of {@link createLexicalReranker}: how much each feature adds to the fused score. */
export interface LexicalRerankerOptions {
  /** Share of the question's rare words (rare among the candidates) the entry holds. @default 0.1 */
  coverageWeight?: number | undefined;
  /**
   * How close together the question's words stand in the entry. Off by default: on the
   * development set every weight tried lowered recall (see the README).
   * @default 0
   */
  proximityWeight?: number | undefined;
  /** Share of the dates, months and years the question names that the entry's transcript date holds. @default 0.3 */
  dateWeight?: number | undefined;
}

/** A crude stem, so "painted" meets "paint" without a dictionary. */
function stem(word: string): string {
  return word.length > 4 ? word.replace(/(ing|ed|es|s)$/, '') : word;
}

const DATE_WORD =
  /^(january|february|march|april|may|june|july|august|september|october|november|december|(19|20)\d\d|\d{1,2})$/;

/**
 * A reranker that needs no model and no network: it adds to each candidate's
 * fused score (normalised; passed by the store as `scores`) what the first
 * stage did not weigh: how much of the question's rarest words the entry covers
 * (rarity measured among the candidates), how close together the question's
 * words stand in it, and whether its transcript date holds the dates the
 * question names. Without `scores` it ranks by the features alone.
 */
export function createLexicalReranker(options: LexicalRerankerOptions = {}): Reranker {
  const weights = parseOptions(lexicalRerankerOptionsSchema, options, 'lexical reranker');
  return {
    model: 'lexical-features',
    async rerank(query, documents, rerankOptions = {}) {
      const terms = [...new Set(topicWords(query).map(stem))];
      const dates = [...new Set(questionWords(query))].filter((word) => DATE_WORD.test(word));
      const parsedDocs = documents.map((document) => {
        const line = transcriptLine(document);
        return { stems: words(line.text).map(stem), date: new Set(words(line.date ?? '')) };
      });
      // A word found in few candidates tells them apart; one found in all tells nothing.
      const idf = new Map<string, number>();
      for (const term of terms) {
        const df = parsedDocs.filter((doc) => doc.stems.includes(term)).length;
        idf.set(term, Math.log(1 + documents.length / (1 + df)));
      }
      const idfTotal = [...idf.values()].reduce((sum, value) => sum + value, 0) || 1;
      const prior = normalised(rerankOptions.scores, documents.length);
      return parsedDocs.map((doc, index) => {
        const present = new Set(doc.stems.filter((word) => idf.has(word)));
        const coverage = [...present].reduce((sum, term) => sum + idf.get(term)!, 0) / idfTotal;
        const dateShare =
          dates.length === 0 ? 0 : dates.filter((word) => doc.date.has(word)).length / dates.length;
        return (
          prior[index]! +
          weights.coverageWeight * coverage +
          weights.proximityWeight * proximity(doc.stems, present) +
          weights.dateWeight * dateShare
        );
      });
    },
  };
}

/** The prior scores min-max normalised to [0, 1]; zeros without them. */
function normalised(scores: readonly number[] | undefined, length: number): number[] {
  if (scores === undefined || scores.length !== length) return new Array<number>(length).fill(0);
  const min = Math.min(...scores);
  const span = Math.max(...scores) - min;
  return scores.map((score) => (span === 0 ? 1 : (score - min) / span));
}

/** 1 / (1 + gap) for the shortest stretch of words holding two different question words; 0 with fewer than two. */
function proximity(stems: string[], present: Set<string>): number {
  if (present.size < 2) return 0;
  let best = Number.POSITIVE_INFINITY;
  let lastTerm: string | undefined;
  let lastAt = -1;
  stems.forEach((word, at) => {
    if (!present.has(word)) return;
    if (lastTerm !== undefined && lastTerm !== word) best = Math.min(best, at - lastAt - 1);
    lastTerm = word;
    lastAt = at;
  });
  return Number.isFinite(best) ? 1 / (1 + best) : 0;
}

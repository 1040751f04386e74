import type { MemoryContext } from './context.js';
import { ftsArg, ftsStatements, rankArg } from './fts.pg.js';
import { isStopword, questionWords, transcriptLine } from './lexical.js';
import { words } from './text.js';

// Query expansion from the store's own statistics (pseudo-relevance feedback):
// the words that stand out in the best first-pass matches (frequent there,
// rare in the store) are searched as a second query, whose scores lift the
// entries they find. It reaches turns that say the same thing in the words
// the conversation itself used, which a question phrased otherwise misses.

const FEEDBACK_DOCS = 5;
const EXPANSION_TERMS = 5;

type Ranked = Array<{ seq: number; relevance: number }>;

/** The expansion words for `query` from the contents of its best first-pass matches. */
async function expansionTerms(
  ctx: MemoryContext,
  query: string,
  contents: string[],
  total: number,
): Promise<string[]> {
  const asked = new Set(questionWords(query));
  const weight = new Map<string, number>();
  contents.forEach((content, rank) => {
    const text = words(transcriptLine(content).text).filter(
      (word) => word.length > 2 && !/^\d+$/.test(word) && !isStopword(word) && !asked.has(word),
    );
    // Better-ranked documents speak louder; long ones do not speak longer.
    for (const word of text) weight.set(word, (weight.get(word) ?? 0) + 1 / (rank + 1) / text.length);
  });
  const candidates = [...weight.entries()].sort((a, b) => b[1] - a[1]).slice(0, EXPANSION_TERMS * 3);
  if (candidates.length === 0) return [];
  const fts = ftsStatements(ctx.db.dialect);
  const counts = await ctx.db.query<{ term: string; n: number }>(
    candidates.map(() => fts.documentFrequency).join(' UNION ALL '),
    candidates.flatMap(([word]) => [word, ftsArg(ctx.db.dialect, `"${word.replaceAll('"', '""')}"`)]),
  );
  const df = new Map(counts.map((row) => [row.term, Number(row.n)]));
  return candidates
    .map(([word, value]) => [word, value * Math.log(1 + total / (1 + (df.get(word) ?? 0)))] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, EXPANSION_TERMS)
    .map(([word]) => word);
}

/**
 * The first-pass ranking with the expansion query's scores added at
 * `expansionWeight` (both normalised by their best), best first; `contentOf`
 * gives the first pass's contents.
 */
export async function expandRanking(
  ctx: MemoryContext,
  query: string,
  ranked: Ranked,
  contentOf: (seq: number) => string | undefined,
  asked: number,
): Promise<Ranked> {
  const weight = ctx.settings.recall.expansionWeight;
  if (weight === 0 || ranked.length === 0) return ranked;
  const contents = ranked
    .slice(0, FEEDBACK_DOCS)
    .map((row) => contentOf(Number(row.seq)))
    .filter((content): content is string => content !== undefined);
  const total = await ctx.db.get<{ n: number }>('SELECT count(*) AS n FROM memory_entries');
  const terms = await expansionTerms(ctx, query, contents, Number(total?.n ?? 0));
  return mergeQuery(ctx, ranked, terms, weight, asked);
}

/**
 * The first-pass ranking with a second query's bm25 scores (`terms` ORed) added at `weight`,
 * both normalised by their best; best first.
 */
export async function mergeQuery(
  ctx: MemoryContext,
  ranked: Ranked,
  terms: string[],
  weight: number,
  asked: number,
): Promise<Ranked> {
  if (terms.length === 0 || weight === 0) return ranked;
  const expanded = await ctx.db.query<{ seq: number; relevance: number }>(
    ftsStatements(ctx.db.dialect).rank,
    {
      match: rankArg(ctx.db.dialect, terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ')),
      limit: asked,
    },
  );
  const top = Math.max(...ranked.map((row) => Number(row.relevance)), Number.MIN_VALUE);
  const topExpanded = Math.max(...expanded.map((row) => Number(row.relevance)), Number.MIN_VALUE);
  const merged = new Map<number, number>();
  for (const row of ranked) merged.set(Number(row.seq), Number(row.relevance) / top);
  for (const row of expanded) {
    const seq = Number(row.seq);
    merged.set(seq, (merged.get(seq) ?? 0) + (weight * Number(row.relevance)) / topExpanded);
  }
  return [...merged.entries()]
    .map(([seq, relevance]) => ({ seq, relevance }))
    .sort((a, b) => b.relevance - a.relevance || a.seq - b.seq);
}

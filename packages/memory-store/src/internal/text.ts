// Word segmentation shared by the full-text lane and the local embedder. ICU's
// word segmenter splits scripts written without spaces (Chinese, Japanese, Thai)
// into words, which FTS5's unicode61 tokenizer cannot do on its own; the
// segmented text is what FTS5 indexes, so both sides of a match agree.
const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

/** Lower-cased, NFKC-normalised word-like segments of `text`. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const part of segmenter.segment(text.normalize('NFKC').toLowerCase())) {
    if (part.isWordLike) out.push(part.segment);
  }
  return out;
}

/** The text FTS5 indexes for `content`: its words separated by spaces. */
export function indexText(content: string): string {
  return words(content).join(' ');
}

/**
 * An FTS5 MATCH expression for a free-text query: every word as a quoted
 * phrase, OR-ed, so bm25 ranks entries by how many query words they hold
 * instead of dropping every entry that misses one. `undefined` when the query
 * has no words.
 */
export function matchExpression(query: string): string | undefined {
  const unique = [...new Set(words(query))];
  if (unique.length === 0) return undefined;
  return unique
    .slice(0, 64)
    .map((word) => `"${word.replaceAll('"', '""')}"`)
    .join(' OR ');
}

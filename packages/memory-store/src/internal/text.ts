// Word segmentation shared by the full-text lane and the local embedder. ICU's
// word segmenter splits scripts written without spaces (Chinese, Japanese, Thai)
// into words, which FTS5's unicode61 tokenizer cannot do on its own; the
// segmented text is what FTS5 indexes, so both sides of a match agree. It is made
// on the first unspaced text: building it pages in ICU's dictionaries (megabytes).
let segmenter: Intl.Segmenter | undefined;

// Scripts written without spaces between words; only text containing them
// needs the dictionary-based segmenter, which is several times slower than a regex.
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD = /[\p{L}\p{M}\p{N}]+(?:['\u2019][\p{L}\p{M}\p{N}]+)*/gu;

/** Lower-cased, NFKC-normalised word-like segments of `text`. */
export function words(text: string): string[] {
  const normalised = text.normalize('NFKC').toLowerCase();
  if (!UNSPACED.test(normalised)) return normalised.match(WORD) ?? [];
  const out: string[] = [];
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  for (const part of segmenter.segment(normalised)) {
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
  return orExpression(queryTerms(query));
}

/** The distinct words of a query (at most 32), each an FTS5 phrase. */
export function queryTerms(query: string): string[] {
  return [...new Set(words(query))].slice(0, 32).map((word) => `"${word.replaceAll('"', '""')}"`);
}

/** Terms OR-ed into one MATCH expression, `undefined` for none. */
export function orExpression(terms: string[]): string | undefined {
  return terms.length === 0 ? undefined : terms.join(' OR ');
}

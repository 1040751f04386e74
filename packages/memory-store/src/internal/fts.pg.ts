import type { Dialect } from '@agentd/storage';

// The full-text statements of the search, per dialect. On libsql they run on the contentless
// FTS5 table and rank by bm25; on PostgreSQL `memory_fts` is a table of `(rowid, body tsvector)`
// rows ('english' configuration: stemmed, stopwords dropped, as FTS5's porter tokenizer stems)
// with a GIN index, and ranks by ts_rank_cd. Both take the FTS5 expression the ranking code
// builds (quoted phrases joined by OR); PostgreSQL gets it as a tsquery through `ftsArg`.

/** The statements of one dialect; the `?`/named arguments are the same on both. */
export interface FtsStatements {
  /** `:match`, `:limit` → `{seq, relevance}` rows, best first (`:match` from `rankArg`). */
  rank: string;
  /** `:match`, `:limit` and the filter's arguments → `{seq, relevance}` rows, best first. */
  rankFiltered(where: string): string;
  /** `(term, match)` → `{term, n}`: how many entries match; joined with UNION ALL. */
  documentFrequency: string;
  /** `(rowid, indexText)` per row: the VALUES tuple of an insert into memory_fts. */
  insertTuple: string;
}

const LIBSQL: FtsStatements = {
  rank: 'SELECT rowid AS seq, -bm25(memory_fts) AS relevance FROM memory_fts WHERE memory_fts MATCH :match ORDER BY bm25(memory_fts) LIMIT :limit',
  rankFiltered: (where) => `SELECT e.seq, -bm25(memory_fts) AS relevance
       FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid
       WHERE memory_fts MATCH :match AND ${where}
       ORDER BY bm25(memory_fts) LIMIT :limit`,
  documentFrequency: 'SELECT ? AS term, (SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?) AS n',
  insertTuple: '(?, ?)',
};

// BM25 as FTS5 computes it (k1 1.2, b 0.75, idf ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6),
// over the tsvector bodies: tf is a lexeme's position count (a phrase's: its rarest lexeme's),
// the length a body's distinct lexemes. ts_rank_cd has no idf, so a common word would weigh as
// much as a rare one; the recall benchmark measures what this keeps. `:match` is the JSON list of
// the expression's phrases (see `rankArg`), each made a tsquery by phraseto_tsquery.
const PG_TERMS = `terms AS (
         SELECT phraseto_tsquery('english', t.value) AS query,
                ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', t.value))) AS lexemes
         FROM json_array_elements_text(CAST(:match AS json)) AS t
       ), corpus AS (
         SELECT count(*)::float8 AS total, coalesce(avg(length(body)), 1)::float8 AS avgdl FROM memory_fts
       ), weighted AS (
         SELECT t.query, t.lexemes,
                greatest(ln((c.total - d.n + 0.5) / (d.n + 0.5)), 1e-6) AS idf
         FROM terms t CROSS JOIN corpus c
         CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM memory_fts WHERE body @@ t.query) d
         WHERE cardinality(t.lexemes) > 0
       )`;
const PG_SCORE = `sum(w.idf * tf.tf * 2.2 / (tf.tf + 1.2 * (0.25 + 0.75 * length(f.body) / c.avgdl)))`;
const PG_TF = `CROSS JOIN LATERAL (
         SELECT min(coalesce(array_length(u.positions, 1), 1))::float8 AS tf
         FROM unnest(f.body) AS u WHERE u.lexeme = ANY (w.lexemes)
       ) tf`;

const PG: FtsStatements = {
  rank: `WITH ${PG_TERMS}
       SELECT f.rowid AS seq, ${PG_SCORE} AS relevance
       FROM weighted w JOIN memory_fts f ON f.body @@ w.query CROSS JOIN corpus c ${PG_TF}
       GROUP BY f.rowid ORDER BY relevance DESC, f.rowid LIMIT :limit`,
  rankFiltered: (where) => `WITH ${PG_TERMS}
       SELECT e.seq, ${PG_SCORE} AS relevance
       FROM weighted w JOIN memory_fts f ON f.body @@ w.query JOIN memory_entries e ON e.seq = f.rowid
       CROSS JOIN corpus c ${PG_TF}
       WHERE ${where}
       GROUP BY e.seq ORDER BY relevance DESC, e.seq LIMIT :limit`,
  documentFrequency: `SELECT CAST(? AS TEXT) AS term,
       (SELECT count(*) FROM memory_fts WHERE body @@ to_tsquery('english', ?)) AS n`,
  insertTuple: "(?, to_tsvector('english', ?))",
};

/** The full-text statements of `dialect`. */
export function ftsStatements(dialect: Dialect): FtsStatements {
  return dialect === 'pg' ? PG : LIBSQL;
}

/** The match argument as `dialect` takes it: the FTS5 expression, or its tsquery. */
export function ftsArg(dialect: Dialect, match: string): string {
  return dialect === 'pg' ? toTsQuery(match) : match;
}

/** The match argument of `rank` and `rankFiltered`: the FTS5 expression, or its phrases as JSON. */
export function rankArg(dialect: Dialect, match: string): string {
  return dialect === 'pg' ? JSON.stringify(phrasesOf(match).map((words) => words.join(' '))) : match;
}

/** The words of each quoted phrase of an FTS5 expression (a doubled quote made one); empty ones left out. */
function phrasesOf(match: string): string[][] {
  const phrases: string[][] = [];
  for (const found of match.matchAll(/"((?:[^"]|"")*)"/g)) {
    const words = found[1]!
      .replaceAll('""', '"')
      .split(/\s+/)
      .filter((word) => word !== '');
    if (words.length > 0) phrases.push(words);
  }
  return phrases;
}

/**
 * An FTS5 expression of quoted phrases joined by OR, as a `to_tsquery` text: each phrase's
 * words followed by each other (`<->`), the phrases OR-ed (`|`). Every word is quoted for
 * to_tsquery (a quote inside doubled), so no caller text is read as tsquery syntax; the
 * configuration still stems the words and drops stopwords. A phrase left empty is skipped.
 */
export function toTsQuery(match: string): string {
  return phrasesOf(match)
    .map((words) => {
      const quoted = words.map((word) => `'${word.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`);
      return quoted.length === 1 ? quoted[0]! : `(${quoted.join(' <-> ')})`;
    })
    .join(' | ');
}

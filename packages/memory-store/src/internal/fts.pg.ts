import type { Dialect } from '@agentd/storage';

// The full-text statements of the search, per dialect. On libsql they run on the contentless
// FTS5 table and rank by bm25; on PostgreSQL `memory_fts` is a table of `(rowid, body tsvector)`
// rows ('english' configuration: stemmed, stopwords dropped, as FTS5's porter tokenizer stems)
// with a GIN index, and ranks by ts_rank_cd. Both take the FTS5 expression the ranking code
// builds (quoted phrases joined by OR); PostgreSQL gets it as a tsquery through `ftsArg`.

/** The statements of one dialect; the `?`/named arguments are the same on both. */
export interface FtsStatements {
  /** `(match, limit)` → `{seq, relevance}` rows, best first. */
  rank: string;
  /** `:match`, `:limit` and the filter's arguments → `{seq, relevance}` rows, best first. */
  rankFiltered(where: string): string;
  /** `(term, match)` → `{term, n}`: how many entries match; joined with UNION ALL. */
  documentFrequency: string;
  /** `(rowid, indexText)` per row: the VALUES tuple of an insert into memory_fts. */
  insertTuple: string;
}

const LIBSQL: FtsStatements = {
  rank: 'SELECT rowid AS seq, -bm25(memory_fts) AS relevance FROM memory_fts WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?',
  rankFiltered: (where) => `SELECT e.seq, -bm25(memory_fts) AS relevance
       FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid
       WHERE memory_fts MATCH :match AND ${where}
       ORDER BY bm25(memory_fts) LIMIT :limit`,
  documentFrequency: 'SELECT ? AS term, (SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?) AS n',
  insertTuple: '(?, ?)',
};

const PG: FtsStatements = {
  rank: `SELECT f.rowid AS seq, ts_rank_cd(f.body, q.query) AS relevance
       FROM memory_fts f, to_tsquery('english', ?) AS q (query)
       WHERE f.body @@ q.query ORDER BY relevance DESC, f.rowid LIMIT ?`,
  rankFiltered: (where) => `SELECT e.seq, ts_rank_cd(f.body, q.query) AS relevance
       FROM memory_fts f JOIN memory_entries e ON e.seq = f.rowid, to_tsquery('english', :match) AS q (query)
       WHERE f.body @@ q.query AND ${where}
       ORDER BY relevance DESC, e.seq LIMIT :limit`,
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

/**
 * An FTS5 expression of quoted phrases joined by OR, as a `to_tsquery` text: each phrase's
 * words followed by each other (`<->`), the phrases OR-ed (`|`). Every word is quoted for
 * to_tsquery (a quote inside doubled), so no caller text is read as tsquery syntax; the
 * configuration still stems the words and drops stopwords. A phrase left empty is skipped.
 */
export function toTsQuery(match: string): string {
  const phrases: string[] = [];
  for (const found of match.matchAll(/"((?:[^"]|"")*)"/g)) {
    const words = found[1]!
      .replaceAll('""', '"')
      .split(/\s+/)
      .filter((word) => word !== '');
    if (words.length === 0) continue;
    const quoted = words.map((word) => `'${word.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`);
    phrases.push(quoted.length === 1 ? quoted[0]! : `(${quoted.join(' <-> ')})`);
  }
  return phrases.join(' | ');
}

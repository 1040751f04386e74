import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration } from '@agentd/storage';

/** The package name migrations are recorded under. */
export const MIGRATION_PACKAGE = '@agentd/memory-store';

/**
 * The tables in either dialect, written once. On PostgreSQL epoch-ms columns and seqs are BIGINT,
 * vectors `bytea` (the ANN index stays per instance), and `memory_fts` is a plain table of
 * `(rowid = seq, body tsvector)` with a GIN index: the text lives once, in memory_entries, as in
 * the contentless FTS5 table, and the body is `to_tsvector('english', …)` of the same indexed
 * words ('english' stems, as FTS5's porter tokenizer does, and drops stopwords).
 */
function schema(dialect: Dialect): string[] {
  const pg = dialect === 'pg';
  const t = columnTypes(dialect);
  return [
    // seq is the rowid shared by the FTS rows and the ANN index keys; id is the public id.
    `CREATE TABLE memory_entries (
        seq ${t.bigint} PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'memory' CHECK (kind IN ('memory', 'observation')),
        content TEXT NOT NULL,
        session_key TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT,
        trust TEXT NOT NULL DEFAULT 'learned' CHECK (trust IN ('system', 'learned', 'external')),
        created_at ${t.bigint} NOT NULL,
        embedding ${t.bytes},
        embedding_model TEXT
      )`,
    'CREATE INDEX memory_entries_scope ON memory_entries (agent_id, tenant, created_at)',
    'CREATE INDEX memory_entries_session ON memory_entries (session_key) WHERE session_key IS NOT NULL',
    // Contentless: the text lives once, in memory_entries; the index keeps only postings.
    ...(pg
      ? [
          `CREATE TABLE memory_fts (
        rowid BIGINT PRIMARY KEY,
        body tsvector NOT NULL
      )`,
          'CREATE INDEX memory_fts_body ON memory_fts USING GIN (body)',
        ]
      : [
          `CREATE VIRTUAL TABLE memory_fts USING fts5(
        body, content = '', contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2'
      )`,
        ]),
    `CREATE TABLE memory_links (
        observation_seq ${t.bigint} NOT NULL REFERENCES memory_entries (seq) ON DELETE CASCADE,
        source_seq ${t.bigint} NOT NULL REFERENCES memory_entries (seq) ON DELETE CASCADE,
        source_session_key TEXT,
        PRIMARY KEY (observation_seq, source_seq)
      )${pg ? '' : ' WITHOUT ROWID'}`,
    'CREATE INDEX memory_links_source ON memory_links (source_seq)',
    'CREATE INDEX memory_links_session ON memory_links (source_session_key) WHERE source_session_key IS NOT NULL',
    `CREATE TABLE memory_embedding_cache (
        model TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        embedding ${t.bytes} NOT NULL,
        created_at ${t.bigint} NOT NULL,
        PRIMARY KEY (model, content_hash)
      )`,
    'CREATE INDEX memory_embedding_cache_age ON memory_embedding_cache (created_at)',
  ];
}

const FIRST = 'entries, full-text, observation links, embedding cache';

/**
 * The memory schema on libsql, applied in order at open. A database migrated by a newer build
 * fails to open with `SCHEMA_TOO_NEW` instead of being rewritten.
 */
export const memoryMigrations: Migration[] = [migration(1, FIRST, schema('libsql'))];

/** The same tables on PostgreSQL, then what a cluster of instances needs. */
export const memoryPgMigrations: Migration[] = [
  migration(1, FIRST, schema('pg')),
  // Several instances share these tables, each with its own vector index: the change log tells
  // them which entries' vectors changed, and seqs come from a sequence so a deleted entry's seq
  // is never given to another (an index still holding it would answer the wrong entry).
  migration(2, 'change log for the per-instance vector indexes, seqs never reused', [
    `CREATE TABLE memory_changes (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        entry_seq BIGINT NOT NULL,
        agent_id TEXT NOT NULL,
        tenant TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
    CREATE INDEX memory_changes_age ON memory_changes (created_at);
    CREATE SEQUENCE memory_entry_seq;
    SELECT setval('memory_entry_seq', coalesce((SELECT max(seq) FROM memory_entries), 0) + 1, false);`,
  ]),
];

/** Both dialects' lists, as `db.migrate(MIGRATION_PACKAGE, memoryMigrationSet)` takes them. */
export const memoryMigrationSet: DialectMigrations = { libsql: memoryMigrations, pg: memoryPgMigrations };

// Literals, quoted identifiers and comments are blanked out before looking for
// keywords, so a column called "update" or a string 'drop me' does not count.
const NOISE = /'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/g;

const READ_STARTS = new Set(['SELECT', 'WITH', 'VALUES', 'EXPLAIN']);

const WRITE_WORDS =
  /\b(?:INSERT|UPDATE|DELETE|REPLACE|UPSERT|CREATE|DROP|ALTER|PRAGMA|ATTACH|DETACH|VACUUM|REINDEX|ANALYZE|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/;

/**
 * True when `sql` certainly only reads. Used to send plain reads to the reader
 * connections; anything doubtful goes to the writer, which can read as well,
 * so a false "no" costs a little concurrency and a false "yes" is avoided.
 */
export function isReadOnlySql(sql: string): boolean {
  const text = sql.replace(NOISE, ' ').trim().toUpperCase();
  const first = /^[A-Z]+/.exec(text)?.[0];
  if (first === undefined || !READ_STARTS.has(first)) {
    return false;
  }
  return !WRITE_WORDS.test(text);
}

const OWN_STATEMENT_STARTS = new Set([
  'PRAGMA',
  'VACUUM',
  'ATTACH',
  'DETACH',
  'BEGIN',
  'COMMIT',
  'END',
  'ROLLBACK',
  'SAVEPOINT',
  'RELEASE',
]);

/**
 * True for statements that cannot run inside a transaction, or that change how
 * the connection behaves (PRAGMA), so they must run on their own rather than
 * be wrapped in the write transaction used for ordinary writes.
 */
export function mustRunAlone(sql: string): boolean {
  const text = sql.replace(NOISE, ' ').trim().toUpperCase();
  const first = /^[A-Z]+/.exec(text)?.[0];
  return first !== undefined && OWN_STATEMENT_STARTS.has(first);
}

import type { Dialect, SqlValue } from '@agentd/storage';
import { isMemoryStoreError } from '../errors.js';
import type { MemoryErrorKind } from '../logger.js';
import type { MemoryFilter, MemoryRecord } from '../types.js';

// Row shapes and SQL helpers shared by the store's read and write paths.

export interface EntryRow {
  seq: number;
  id: string;
  agent_id: string;
  tenant: string;
  kind: 'memory' | 'observation';
  content: string;
  session_key: string | null;
  tags: string;
  metadata: string | null;
  trust: 'system' | 'learned' | 'external';
  created_at: number;
  embedded: number;
}

export const RECORD_COLUMNS = `e.seq, e.id, e.agent_id, e.tenant, e.kind, e.content, e.session_key, e.tags, e.metadata,
  e.trust, e.created_at, (e.embedding IS NOT NULL AND e.embedding_model = :model) AS embedded`;

export function toRecord(row: EntryRow): MemoryRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    tenant: row.tenant,
    kind: row.kind,
    content: row.content,
    sessionKey: row.session_key,
    tags: JSON.parse(row.tags) as string[],
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    trust: row.trust,
    createdAt: Number(row.created_at),
    embedded: Number(row.embedded) === 1,
  };
}

/** The scalar filter fields and their condition; each binds the argument named after its field. */
const FILTER_CONDITIONS = [
  ['agentId', 'e.agent_id = :agentId'],
  ['tenant', 'e.tenant = :tenant'],
  ['sessionKey', 'e.session_key = :sessionKey'],
  ['kind', 'e.kind = :kind'],
  ['sinceMs', 'e.created_at >= :sinceMs'],
  ['untilMs', 'e.created_at < :untilMs'],
] as const satisfies ReadonlyArray<readonly [keyof MemoryFilter, string]>;

/** SQL conditions on alias `e` with named arguments. */
export function filterSql(
  filter: MemoryFilter,
  dialect: Dialect = 'libsql',
): { where: string; args: Record<string, SqlValue> } {
  const clauses: string[] = [];
  const args: Record<string, SqlValue> = {};
  for (const [field, condition] of FILTER_CONDITIONS) {
    const value = filter[field];
    if (value !== undefined) {
      clauses.push(condition);
      args[field] = value;
    }
  }
  const tags = [...new Set(filter.tags ?? [])];
  if (tags.length > 0 && dialect === 'pg') {
    // Every tag in the entry's JSON array: jsonb containment on PostgreSQL.
    args.tags = JSON.stringify(tags);
    clauses.push('CAST(e.tags AS jsonb) @> CAST(:tags AS jsonb)');
  } else if (tags.length > 0) {
    const names = tags.map((tag, index) => {
      args[`tag${index}`] = tag;
      return `:tag${index}`;
    });
    clauses.push(
      `(SELECT count(DISTINCT value) FROM json_each(e.tags) WHERE value IN (${names.join(', ')})) = ${tags.length}`,
    );
  }
  return { where: clauses.length === 0 ? '1 = 1' : clauses.join(' AND '), args };
}

/** True when the filter narrows below an agent and tenant scope (the index cannot apply it). */
export function narrowsBelowScope(filter: MemoryFilter): boolean {
  return (
    (filter.tags?.length ?? 0) > 0 ||
    filter.sinceMs !== undefined ||
    filter.untilMs !== undefined ||
    filter.sessionKey !== undefined ||
    filter.kind !== undefined
  );
}

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

export function questionMarks(count: number): string {
  return new Array(count).fill('?').join(', ');
}

/** errorKind for an embedder or reranker failure, from the error's recorded reason. */
export function errorKindOf(error: unknown): MemoryErrorKind {
  if (isMemoryStoreError(error)) {
    const reason = error.data?.reason;
    if (reason === 'timeout') return 'timeout';
    if (reason === 'network') return 'network';
    if (reason === 'auth') return 'auth';
    if (error.code === 'DIMENSIONS_MISMATCH' || error.code === 'INVALID_OPTIONS') return 'config';
    return 'dependency';
  }
  return 'internal';
}

/** An entry's seq with the index scope it lives in. */
export interface ScopedSeq {
  seq: number;
  agent_id: string;
  tenant: string;
}

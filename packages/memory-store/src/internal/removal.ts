import type { Transaction } from '@agentd/storage';
import { z } from 'zod';
import { MemoryStoreError } from '../errors.js';
import type { MemoryStore } from '../memory-store.js';
import type { SessionDeleteResult } from '../types.js';
import { AnnIndex } from './ann-index.js';
import { logChanges, logRange } from './changes.pg.js';
import { lockSeqs } from './write-path.js';
import type { MemoryContext } from './context.js';
import { idSchema, parse } from './inputs.js';
import { chunks, filterSql, questionMarks, type ScopedSeq } from './rows.js';

// Removal: one entry, a session's memories (with the observations derived from
// them), or everything of an agent; each keeps FTS rows, links and the index in step.

/** Deletes entries with their FTS rows and links, inside `tx` (logged for other instances on PostgreSQL). */
async function deleteRows(ctx: MemoryContext, tx: Transaction, rows: ScopedSeq[]): Promise<void> {
  if (ctx.db.dialect === 'pg') await logChanges(tx, ctx.bus, rows);
  for (const group of chunks(rows, 500)) {
    const seqs = group.map((row) => row.seq);
    const marks = questionMarks(seqs.length);
    await tx.execute(`DELETE FROM memory_fts WHERE rowid IN (${marks})`, seqs);
    await tx.execute(`DELETE FROM memory_links WHERE observation_seq IN (${marks})`, seqs);
    await tx.execute(`DELETE FROM memory_links WHERE source_seq IN (${marks})`, seqs);
    await tx.execute(`DELETE FROM memory_entries WHERE seq IN (${marks})`, seqs);
  }
}

function unindex(ctx: MemoryContext, rows: ScopedSeq[]): void {
  if (ctx.index === undefined) return;
  const byScope = new Map<string, number[]>();
  for (const row of rows) {
    const key = AnnIndex.scopeKey(row.agent_id, row.tenant);
    byScope.set(key, [...(byScope.get(key) ?? []), Number(row.seq)]);
  }
  for (const [scope, seqs] of byScope) ctx.index.remove(scope, seqs);
}

/**
 * Removes `sources`, unlinks them from observations, and deletes the
 * observations left without any source (or, with `purgeDerived`, every
 * observation derived from them).
 */
async function removeSources(
  ctx: MemoryContext,
  tx: Transaction,
  sources: ScopedSeq[],
  sessionKey: string | undefined,
  purgeDerived: boolean,
): Promise<{ removed: ScopedSeq[]; observationsDeleted: number; observationsUnlinked: number }> {
  const sourceSeqs = sources.map((row) => row.seq);
  const affected = new Set<number>();
  for (const group of chunks(sourceSeqs, 500)) {
    const rows = await tx.query<{ observation_seq: number }>(
      `SELECT DISTINCT observation_seq FROM memory_links WHERE source_seq IN (${questionMarks(group.length)})`,
      group,
    );
    for (const row of rows) affected.add(Number(row.observation_seq));
  }
  if (sessionKey !== undefined) {
    const rows = await tx.query<{ observation_seq: number }>(
      'SELECT DISTINCT observation_seq FROM memory_links WHERE source_session_key = ?',
      [sessionKey],
    );
    for (const row of rows) affected.add(Number(row.observation_seq));
  }
  for (const seq of sourceSeqs) affected.delete(seq);
  const observations = await scoped(tx, [...affected]);
  let doomed: ScopedSeq[];
  if (purgeDerived) {
    doomed = observations;
  } else {
    for (const group of chunks(sourceSeqs, 500)) {
      await tx.execute(
        `DELETE FROM memory_links WHERE source_seq IN (${questionMarks(group.length)})`,
        group,
      );
    }
    if (sessionKey !== undefined) {
      await tx.execute('DELETE FROM memory_links WHERE source_session_key = ?', [sessionKey]);
    }
    doomed = [];
    for (const observation of observations) {
      const left = await tx.get<{ count: number }>(
        'SELECT count(*) AS count FROM memory_links WHERE observation_seq = ?',
        [observation.seq],
      );
      if (Number(left?.count ?? 0) === 0) doomed.push(observation);
    }
  }
  const removed = [...sources, ...doomed];
  await deleteRows(ctx, tx, removed);
  return {
    removed,
    observationsDeleted: doomed.length,
    observationsUnlinked: observations.length - doomed.length,
  };
}

async function scoped(tx: Transaction, seqs: number[]): Promise<ScopedSeq[]> {
  const out: ScopedSeq[] = [];
  for (const group of chunks(seqs, 500)) {
    const rows = await tx.query<ScopedSeq>(
      `SELECT seq, agent_id, tenant FROM memory_entries WHERE seq IN (${questionMarks(group.length)})`,
      group,
    );
    out.push(...rows.map((row) => ({ ...row, seq: Number(row.seq) })));
  }
  return out;
}

/** Deletes one entry once `writesSettled` resolves; rejects `NOT_FOUND`. */
export async function deleteEntry(ctx: MemoryContext, writesSettled: Promise<void>, id: string) {
  await writesSettled;
  const outcome = await ctx.db.transaction(async (tx) => {
    await lockSeqs(tx, ctx.db.dialect);
    const row = await tx.get<ScopedSeq>('SELECT seq, agent_id, tenant FROM memory_entries WHERE id = ?', [
      id,
    ]);
    if (row === undefined) return undefined;
    return removeSources(ctx, tx, [{ ...row, seq: Number(row.seq) }], undefined, false);
  });
  if (outcome === undefined) {
    throw new MemoryStoreError('NOT_FOUND', `Memory entry not found: ${id}`, { data: { id } });
  }
  unindex(ctx, outcome.removed);
  return { id, deleted: true as const, observationsDeleted: outcome.observationsDeleted };
}

export async function deleteBySession(
  ctx: MemoryContext,
  writesSettled: Promise<void>,
  input: Parameters<MemoryStore['deleteBySession']>[0],
): Promise<SessionDeleteResult> {
  const request = parse(
    z
      .object({
        sessionKey: z.string().min(1).max(512),
        agentId: idSchema.optional(),
        tenant: idSchema.optional(),
        purgeDerived: z.boolean().optional(),
      })
      .strict(),
    input,
    'session memory deletion',
  );
  await writesSettled;
  const began = performance.now();
  const filter = filterSql(
    {
      agentId: request.agentId,
      tenant: request.tenant,
      sessionKey: request.sessionKey,
    },
    ctx.db.dialect,
  );
  const outcome = await ctx.db.transaction(async (tx) => {
    await lockSeqs(tx, ctx.db.dialect);
    const sources = await tx.query<ScopedSeq>(
      `SELECT e.seq, e.agent_id, e.tenant FROM memory_entries e WHERE ${filter.where}`,
      filter.args,
    );
    const result = await removeSources(
      ctx,
      tx,
      sources.map((row) => ({ ...row, seq: Number(row.seq) })),
      request.sessionKey,
      request.purgeDerived ?? false,
    );
    return { ...result, memoriesDeleted: sources.length };
  });
  unindex(ctx, outcome.removed);
  ctx.logger.info(
    {
      step: 'link',
      durationMs: performance.now() - began,
      itemCount: outcome.memoriesDeleted,
      reason: 'session_reset',
    },
    'memories of a session deleted',
  );
  return {
    memoriesDeleted: outcome.memoriesDeleted,
    observationsDeleted: outcome.observationsDeleted,
    observationsUnlinked: outcome.observationsUnlinked,
  };
}

/** Deletes every entry, or every entry of one agent, once `writesSettled` resolves. */
export async function flushEntries(
  ctx: MemoryContext,
  writesSettled: Promise<void>,
  input: { agentId?: string | undefined } = {},
): Promise<{ flushed: number }> {
  const request = parse(z.object({ agentId: idSchema.optional() }).strict(), input, 'memory flush');
  await writesSettled;
  const flushed = await ctx.db.transaction(async (tx) => {
    await lockSeqs(tx, ctx.db.dialect);
    if (request.agentId === undefined) {
      const count = await tx.get<{ count: number }>('SELECT count(*) AS count FROM memory_entries');
      if (ctx.db.dialect === 'pg') await logRange(tx, ctx.bus, 1, Number.MAX_SAFE_INTEGER);
      await tx.execute('DELETE FROM memory_fts');
      await tx.execute('DELETE FROM memory_links');
      await tx.execute('DELETE FROM memory_entries');
      return Number(count?.count ?? 0);
    }
    const rows = await tx.query<ScopedSeq>(
      'SELECT seq, agent_id, tenant FROM memory_entries WHERE agent_id = ?',
      [request.agentId],
    );
    await deleteRows(
      ctx,
      tx,
      rows.map((row) => ({ ...row, seq: Number(row.seq) })),
    );
    return rows.length;
  });
  if (ctx.index !== undefined) {
    if (request.agentId === undefined) ctx.index.clear();
    else {
      for (const scope of ctx.index.scopes()) {
        if (scope.split('\u0000')[0] === request.agentId) ctx.index.clear(scope);
      }
    }
  }
  return { flushed };
}

import { type ClusterBus, nowMs, type Queryable, type Transaction } from '@agentd/storage';
import { AnnIndex } from './ann-index.js';
import { addVectors, type MemoryContext } from './context.js';
import { chunks, questionMarks, type ScopedSeq } from './rows.js';
import { fromBlob } from './vectors.js';

// On PostgreSQL several instances share the memory tables while each keeps its own vector
// index. Every write that changes which vectors exist (insert, delete, re-embed) appends the
// entries' seqs to `memory_changes` in its own transaction and announces them on the bus at
// commit; each instance's follower reads the log past its high-water mark and brings its index
// in line with the rows as they are now. The notice only wakes the follower up: it also polls,
// and re-reads a window below its mark, so a lost notice or an id committed out of order delays
// an update but never loses it.

/** The bus topic of change notices; the payload is `{ seqs: [first, last] }` of the entries. */
export const MEMORY_CHANGES_TOPIC = 'memory:changed';
/** How often a follower reads the log without a notice (the backstop). */
export const FOLLOW_POLL_MS = 1000;
/** Log ids below the high-water mark read again at each check (ids may commit out of order). */
const WINDOW = 1000;
/** Log rows kept this long; a follower away longer rebuilds its index from the entries. */
const RETENTION_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 60_000;
const PAGE = 2000;
const NOW = nowMs('pg');

/** Appends the entries' seqs to the change log inside `tx` and announces them at commit. */
export async function logChanges(
  tx: Transaction,
  bus: ClusterBus | undefined,
  rows: ScopedSeq[],
): Promise<void> {
  if (rows.length === 0) return;
  for (const group of chunks(rows, 300)) {
    await tx.execute(
      `INSERT INTO memory_changes (entry_seq, agent_id, tenant, created_at)
       VALUES ${group.map(() => `(?, ?, ?, ${NOW})`).join(', ')}`,
      group.flatMap((row) => [row.seq, row.agent_id, row.tenant]),
    );
  }
  const seqs = rows.map((row) => row.seq);
  await bus?.publish(MEMORY_CHANGES_TOPIC, { seqs: [Math.min(...seqs), Math.max(...seqs)] }, tx);
}

/** Logs the entries whose seq is in `[first, last]` (a batch just inserted) inside `tx`. */
export async function logRange(
  tx: Transaction,
  bus: ClusterBus | undefined,
  first: number,
  last: number,
): Promise<void> {
  await tx.execute(
    `INSERT INTO memory_changes (entry_seq, agent_id, tenant, created_at)
     SELECT seq, agent_id, tenant, ${NOW} FROM memory_entries WHERE seq BETWEEN ? AND ?`,
    [first, last],
  );
  await bus?.publish(MEMORY_CHANGES_TOPIC, { seqs: [first, last] }, tx);
}

interface ChangeRow {
  id: number;
  entry_seq: number;
  agent_id: string;
  tenant: string;
  low: number;
}

/**
 * Keeps one instance's vector index in step with the change log. `mark()` records the log's
 * end before a rebuild reads the entries; `check()` applies what came after (and a window
 * below); `start` runs it on every notice and every {@link FOLLOW_POLL_MS}.
 */
export class ChangeFollower {
  readonly #ctx: MemoryContext;
  readonly #rebuild: () => void;
  #mark = 0;
  readonly #applied = new Set<number>();
  #stop: (() => void) | undefined;
  #prunedAt = 0;

  /** `rebuild` starts a full rebuild of the index (a follower that fell behind the log's retention). */
  constructor(ctx: MemoryContext, rebuild: () => void) {
    this.#ctx = ctx;
    this.#rebuild = rebuild;
  }

  /** Records the log's last id: changes after it are applied on top of a rebuild begun now. */
  async mark(): Promise<void> {
    const row = await this.#ctx.db.get<{ id: number | null }>('SELECT max(id) AS id FROM memory_changes');
    this.#mark = Number(row?.id ?? 0);
    this.#applied.clear();
  }

  /** Follows notices on `bus` (with its polling backstop), or polls alone without one. */
  start(bus: ClusterBus | undefined): void {
    const run = () =>
      this.check().catch((error: unknown) =>
        this.#ctx.logger.warn(
          {
            err: error,
            errorKind: 'dependency',
            hint: 'vector recall may miss entries written on other instances until the next check succeeds',
          },
          'memory change log read failed',
        ),
      );
    if (bus !== undefined) {
      this.#stop = bus.watch(MEMORY_CHANGES_TOPIC, run, { pollMs: FOLLOW_POLL_MS });
      return;
    }
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      void run().finally(() => {
        running = false;
      });
    }, FOLLOW_POLL_MS);
    timer.unref();
    this.#stop = () => clearInterval(timer);
  }

  stop(): void {
    this.#stop?.();
    this.#stop = undefined;
  }

  /** Applies every change past the mark (and the window below it) not applied yet. */
  async check(): Promise<void> {
    for (;;) {
      const rows = await this.#ctx.db.query<ChangeRow>(
        `SELECT id, entry_seq, agent_id, tenant, (SELECT min(id) FROM memory_changes) AS low
         FROM memory_changes WHERE id > ? ORDER BY id LIMIT ${PAGE}`,
        [this.#mark - WINDOW],
      );
      const fresh = rows.filter((row) => !this.#applied.has(Number(row.id)));
      if (rows.length > 0 && this.#mark > 0 && Number(rows[0]!.low) > this.#mark + 1) {
        // The rows right after the mark were pruned: this instance was away too long.
        this.#rebuild();
        return;
      }
      if (fresh.length > 0) await this.#apply(fresh);
      for (const row of fresh) this.#applied.add(Number(row.id));
      for (const row of rows) this.#mark = Math.max(this.#mark, Number(row.id));
      for (const id of this.#applied) if (id <= this.#mark - WINDOW) this.#applied.delete(id);
      if (rows.length < PAGE) break;
    }
    await this.#prune();
  }

  /** Puts each logged entry's current vector in its scope, or removes it where it no longer is. */
  async #apply(changes: ChangeRow[]): Promise<void> {
    const ctx = this.#ctx;
    const index = ctx.index;
    if (index === undefined) return;
    const seqs = [...new Set(changes.map((change) => Number(change.entry_seq)))];
    const current = new Map<number, { agent_id: string; tenant: string; vector: Float32Array | undefined }>();
    for (const group of chunks(seqs, 500)) {
      const rows = await ctx.db.query<{
        seq: number;
        agent_id: string;
        tenant: string;
        embedding: unknown;
        embedding_model: string | null;
      }>(
        `SELECT seq, agent_id, tenant, embedding, embedding_model FROM memory_entries
         WHERE seq IN (${questionMarks(group.length)})`,
        group,
      );
      for (const row of rows) {
        const vector = row.embedding_model === ctx.embedder.model ? fromBlob(row.embedding) : undefined;
        current.set(Number(row.seq), {
          agent_id: row.agent_id,
          tenant: row.tenant,
          vector: vector?.length === ctx.embedder.dimensions ? vector : undefined,
        });
      }
    }
    const puts = new Map<string, { seqs: number[]; vectors: Float32Array[] }>();
    const put = new Set<number>();
    for (const change of changes) {
      const seq = Number(change.entry_seq);
      const scope = AnnIndex.scopeKey(change.agent_id, change.tenant);
      const row = current.get(seq);
      // Removed first, so a put replaces the copy (the HNSW index keeps a key's first vector).
      index.remove(scope, [seq]);
      if (row === undefined || row.vector === undefined) continue;
      if (row.agent_id !== change.agent_id || row.tenant !== change.tenant) continue;
      if (put.has(seq)) continue;
      put.add(seq);
      const group = puts.get(scope) ?? { seqs: [], vectors: [] };
      group.seqs.push(seq);
      group.vectors.push(row.vector);
      puts.set(scope, group);
    }
    await addVectors(index, puts);
  }

  /** Deletes log rows past retention (keeping the newest), at most once a minute per instance. */
  async #prune(): Promise<void> {
    const now = Date.now();
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    await pruneChanges(this.#ctx.db);
  }
}

/** Deletes change-log rows older than the retention, always keeping the newest one. */
export async function pruneChanges(db: Queryable): Promise<void> {
  await db.execute(
    `DELETE FROM memory_changes WHERE created_at < ${NOW} - ?
       AND id < (SELECT max(id) FROM memory_changes)`,
    [RETENTION_MS],
  );
}

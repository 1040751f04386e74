import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { type Database, openDatabase } from '@agentd/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, type MemoryStore } from './memory-store.js';

// The pgvector path, through the same Database port as on a PostgreSQL server: PGlite
// (PostgreSQL compiled to WebAssembly, which ships pgvector) served on a local socket that the
// `pg` driver speaks to. Debian's PostgreSQL 15 has no pgvector, so the server suites run the
// bytea path and this one the pgvector SQL.

describe('memory store on PostgreSQL with pgvector (PGlite)', { timeout: 180_000 }, () => {
  let pglite: PGlite;
  let server: PGLiteSocketServer;
  let db: Database;
  const stores: MemoryStore[] = [];

  beforeAll(async () => {
    pglite = await PGlite.create({ extensions: { vector } });
    server = new PGLiteSocketServer({ db: pglite, port: 0, host: '127.0.0.1' });
    await server.start();
    db = await openDatabase({ url: `postgres://postgres@${server.getServerConn()}/postgres`, poolMax: 1 });
    // PGlite runs initdb in WebAssembly at create: seconds on a quiet machine, far more on a busy one.
  }, 180_000);

  afterAll(async () => {
    for (const store of stores.splice(0)) await store.close();
    await db?.close();
    await server?.stop();
    await pglite?.close();
  });

  async function open(): Promise<MemoryStore> {
    const store = await createMemoryStore({ database: db });
    stores.push(store);
    await store.ready();
    return store;
  }

  const vectorSearch = (store: MemoryStore, query: string, agentId: string) =>
    store.search({ query, agentId, tenant: 'default', lanes: ['vector'], rerank: false, limit: 3 });

  it('enables the extension, keeps vectors in an HNSW-indexed column and answers from it on every store', async () => {
    const writer = await open();
    const reader = await open();
    const columns = await db.query<{ type: string }>(
      "SELECT udt_name AS type FROM information_schema.columns WHERE table_name = 'memory_entries' AND column_name = 'embedding_vec'",
    );
    expect(columns).toEqual([{ type: 'vector' }]);
    const indexes = await db.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename = 'memory_entries' AND indexdef LIKE '%hnsw%'",
    );
    expect(indexes).toHaveLength(1);
    expect(indexes[0]!.indexdef).toContain('vector_cosine_ops');
    expect(indexes[0]!.indexdef).toContain('agentd-hashing-v1-384');

    // A crowd of one agent's entries, and a few of another: the filtered scan still finds those.
    await writer.storeMany(
      Array.from({ length: 300 }, (_, index) => ({
        content: `crowd note ${index} about parking`,
        agentId: 'crowd',
      })),
    );
    const { id } = await writer.store({ content: 'kingfishers nest in river banks', agentId: 'solo' });
    await writer.store({ content: 'otters swim in cold water', agentId: 'solo' });
    // No index in the reader's process: it sees the writer's entry at once.
    const found = await vectorSearch(reader, 'kingfishers river', 'solo');
    expect(found.results[0]?.id).toBe(id);
    expect(found.recall).toMatchObject({ exact: false, lanes: ['vector'] });
    // Every crowd entry is nearer to this question than the solo one: the agent's filter still
    // gets its entry (the planner may take the scope index here, or HNSW with an iterative scan).
    const filtered = await vectorSearch(reader, 'parking notes about the river banks', 'solo');
    expect(filtered.results.map((entry) => entry.id)).toContain(id);
  });

  it('plans the lane on the HNSW index: the query matches its expression and predicate', async () => {
    await open();
    const probe = `[${Array.from({ length: 384 }, (_, index) => (index === 0 ? 1 : 0)).join(',')}]`;
    // Forced off the table scans (a small table is cheaper to scan) to see the index can serve.
    await db.execute('SET enable_seqscan = off');
    await db.execute('SET enable_bitmapscan = off');
    try {
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT e.seq FROM memory_entries e
         WHERE e.embedding_model = 'agentd-hashing-v1-384' AND e.embedding_vec IS NOT NULL
         ORDER BY (e.embedding_vec::vector(384)) <=> CAST(? AS vector(384)) LIMIT 5`,
        [probe],
      );
      expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toMatch(
        /Index Scan using memory_entries_hnsw_/,
      );
    } finally {
      await db.execute('RESET enable_seqscan');
      await db.execute('RESET enable_bitmapscan');
    }
  });

  it('copies vectors stored before pgvector was there into the column at open', async () => {
    await db.execute('UPDATE memory_entries SET embedding_vec = NULL');
    const store = await open();
    const missing = await db.get<{ n: number }>(
      'SELECT count(*) AS n FROM memory_entries WHERE embedding IS NOT NULL AND embedding_vec IS NULL',
    );
    expect(Number(missing?.n)).toBe(0);
    const found = await vectorSearch(store, 'otters cold water', 'solo');
    expect(found.results[0]?.content).toBe('otters swim in cold water');
    // Deleted on one store, gone from every store's vector lane.
    await store.delete(found.results[0]!.id);
    const after = await vectorSearch(stores[0]!, 'otters cold water', 'solo');
    expect(after.results.map((entry) => entry.content)).not.toContain('otters swim in cold water');
  });
});

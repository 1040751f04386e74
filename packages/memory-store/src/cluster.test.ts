import { type Coordinator, type Database, openCoordination, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore, type MemoryStore } from './memory-store.js';

// Two instances on one PostgreSQL database, each with its own pool, coordinator and in-process
// vector index: a write on one reaches the other's index through the change log, announced on
// the bus and polled as a backstop. Only the vector lane is asked, since the full-text lane reads
// the shared tables directly.

interface Instance {
  db: Database;
  coordinator: Coordinator | undefined;
  store: MemoryStore;
}

/** Polls `probe` until it answers true, failing after `deadlineMs`; answers the time it took. */
async function within(deadlineMs: number, probe: () => Promise<boolean>): Promise<number> {
  const began = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - began;
    if (performance.now() - began > deadlineMs) throw new Error(`not true within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!pgSuitesEnabled())('memory on PostgreSQL shared by instances', () => {
  let url: string;
  const instances: Instance[] = [];

  async function instance(options: { bus: boolean; index?: 'quantized' | 'hnsw' }): Promise<Instance> {
    const db = await openDatabase({ url, poolMax: 4 });
    let coordinator: Coordinator | undefined;
    if (options.bus) {
      // A slow poll, so a change seen at once must have come by the notice.
      coordinator = await openCoordination(db, { pollMs: 60_000 });
      await coordinator.start();
    }
    const store = await createMemoryStore({
      database: db,
      ...(coordinator === undefined ? {} : { bus: coordinator.bus }),
      index: { kind: options.index ?? 'quantized' },
    });
    await store.ready();
    const made = { db, coordinator, store };
    instances.push(made);
    return made;
  }

  const vectorIds = async (store: MemoryStore, query: string, agentId = 'default') =>
    (await store.search({ query, agentId, tenant: 'default', lanes: ['vector'], rerank: false })).results.map(
      (entry) => entry.id,
    );

  beforeAll(async () => {
    url = await freshPgDatabaseUrl('agentd_memory_cluster');
  });

  afterAll(async () => {
    for (const made of instances.splice(0)) {
      await made.store.close();
      await made.coordinator?.close();
      await made.db.close();
    }
  });

  it('a write on one instance is in the other\u2019s vector index within 1 s, and a delete leaves it', async () => {
    const a = await instance({ bus: true });
    const b = await instance({ bus: true, index: 'hnsw' });
    const { id } = await a.store.store({ content: 'kingfishers nest in river banks' });
    const waited = await within(1000, async () =>
      (await vectorIds(b.store, 'kingfishers river')).includes(id),
    );
    expect(waited).toBeLessThan(1000);
    const search = await b.store.search({ query: 'kingfishers river', lanes: ['vector'], rerank: false });
    expect(search.recall.exact).toBe(false);

    const [first, second] = await a.store.storeMany([
      { content: 'otters swim in cold water', agentId: 'zoo' },
      { content: 'herons stand still in shallow water', agentId: 'zoo' },
    ]);
    await within(1000, async () => (await vectorIds(b.store, 'otters herons water', 'zoo')).length === 2);
    await b.store.delete(first!.id);
    await within(1000, async () => {
      const ids = await vectorIds(a.store, 'otters herons water', 'zoo');
      return ids.length === 1 && ids[0] === second!.id;
    });
    // A seq is never given again, so the other instance's copy can never answer another entry.
    const { id: later } = await b.store.store({ content: 'otters again', agentId: 'zoo' });
    await within(1000, async () => (await vectorIds(a.store, 'otters', 'zoo')).includes(later));
    expect(await vectorIds(a.store, 'otters swim in cold water', 'default')).not.toContain(later);
  });

  it('follows by polling alone when there is no bus', async () => {
    const a = await instance({ bus: false });
    const b = await instance({ bus: false });
    const { id } = await a.store.store({ content: 'lighthouses guide ships at night', agentId: 'poll' });
    await within(2500, async () => (await vectorIds(b.store, 'lighthouses ships', 'poll')).includes(id));
    await a.store.flush({ agentId: 'poll' });
    await within(2500, async () => (await vectorIds(b.store, 'lighthouses ships', 'poll')).length === 0);
  });
});

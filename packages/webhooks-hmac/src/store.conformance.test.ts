import { type Database, openDatabase } from '@agentd/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../test/helpers.js';
import { webhookMigrationSet } from './migrations.js';
import { createWebhookStore, type WebhookStore } from './store.js';

// The durable store's behaviour, the same body on libsql and (when enabled) on PostgreSQL.
const plan = { action: 'agent' as const, message: 'hello', sessionKey: 'hook:a' };

describe.each(testDialects())('webhook store on $name', ({ name, url }) => {
  let db: Database;
  let clock = 1_700_000_000_000;
  const now = () => clock;
  let store: WebhookStore;
  let dbUrl: string;
  beforeAll(async () => {
    dbUrl = await url();
    db = await openDatabase({ url: dbUrl });
    await db.migrate('@agentd/webhooks-hmac', webhookMigrationSet);
    store = createWebhookStore({ db, now, counterFlushMs: 60_000 });
  });
  afterAll(async () => {
    await store?.close();
    await db?.close();
  });

  it('migrates its dialect list and stores epoch ms as numbers', async () => {
    expect(db.dialect).toBe(name);
    await store.accept({ endpoint: 'mapped', mappingId: 'm', deliveryId: 'd-ms', plan });
    const row = await db.get<{ received_at: unknown }>(
      "SELECT received_at FROM webhook_deliveries WHERE delivery_id = 'd-ms'",
    );
    expect(row?.received_at).toBe(clock);
    const job = await store.claimNextJob();
    expect(job).toMatchObject({ deliveryId: 'd-ms', attempts: 1, createdAt: clock });
    await store.completeJob(job!.id, {
      finishReason: 'stop',
      responseChars: 2,
      deliveryStatus: 'not_requested',
    });
    expect(await store.queueStats()).toMatchObject({ done: 1, running: 0 });
  });

  it('answers duplicate within the window and takes an expired id again', async () => {
    const same = () => store.accept({ endpoint: 'mapped', mappingId: 'm', deliveryId: 'd-win', plan });
    expect(await same()).toMatchObject({ duplicate: false });
    clock += 60_000;
    expect(await same()).toEqual({ duplicate: true });
    clock += 24 * 60 * 60 * 1000;
    expect(await same()).toMatchObject({ duplicate: false });
    while ((await store.claimNextJob()) !== undefined) {
      // drain the two queued jobs for the next tests
    }
  });

  it('puts a released job back without counting the attempt (scalar max in either dialect)', async () => {
    const { jobId } = (await store.accept({ endpoint: 'strict', mappingId: 'm', plan })) as { jobId: number };
    const job = await store.claimNextJob();
    expect(job?.id).toBe(jobId);
    await store.releaseJob(jobId);
    expect((await store.claimNextJob())?.attempts).toBe(1);
    await store.failJob(jobId, 'boom', undefined);
  });

  it('sums outcome counters with an upsert', async () => {
    const outcome = {
      endpoint: 'mapped' as const,
      outcome: 'rejected' as const,
      reason: 'signature_mismatch' as const,
      mappingId: '',
    };
    store.recordOutcome(outcome);
    store.recordOutcome(outcome);
    await store.flushCounters();
    store.recordOutcome(outcome);
    const rows = await store.counters();
    expect(rows.find((row) => row.reason === 'signature_mismatch')?.count).toBe(3);
  });

  it('queues one job when many requests race on one delivery id', async () => {
    // Separate handles, as separate instances would have (on libsql the writer lock orders them).
    const others = await Promise.all([1, 2, 3].map(() => openDatabase({ url: dbUrl })));
    try {
      const stores = others.map((handle) => createWebhookStore({ db: handle, now }));
      const results = await Promise.all(
        stores.flatMap((each) =>
          [1, 2, 3].map(() =>
            each.accept({ endpoint: 'mapped', mappingId: 'm', deliveryId: 'd-race', plan }),
          ),
        ),
      );
      expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
      const queued = await db.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM webhook_agent_queue WHERE delivery_id = 'd-race'",
      );
      expect(Number(queued?.n)).toBe(1);
      for (const each of stores) await each.close();
    } finally {
      for (const handle of others) await handle.close();
    }
  });

  it('prunes expired ids and old finished jobs', async () => {
    clock += 8 * 24 * 60 * 60 * 1000;
    const pruned = await store.prune();
    expect(pruned.deliveries).toBeGreaterThan(0);
    expect(pruned.jobs).toBeGreaterThan(0);
  });
});

import {
  type Coordinator,
  type Database,
  type HostAffinity,
  openDatabase,
  openHostAffinity,
} from '@agentd/storage';
import { pgSuitesEnabled, testInstances } from '@agentd/storage/testing';
import { eventually, turnRunner } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { testDialects } from '../test/helpers.js';
import { webhooksSectionSchema } from './config.js';
import { webhookMigrationSet } from './migrations.js';
import { createWebhookService } from './service.js';
import { type AgentTurnRunner, createQueueDrainer, type QueueDrainer } from './queue-drainer.js';
import type { ClaimWhere } from './internal/job-claims.js';
import { createWebhookStore, type WebhookStore } from './store.js';

// Three instances in one process, as three daemons would be: each its own pool, coordinator
// (its own instance id), store and drainer, all on one database.
interface Instance {
  db: Database;
  coordinator: Coordinator;
  store: WebhookStore;
  drainer: QueueDrainer | undefined;
  turns: string[];
  /** The agent of each turn, in order. */
  agents: string[];
}

const cluster = testInstances();
afterEach(() => cluster.closeAll());

function recordingRunner(turns: string[], delayMs = 2, agents?: string[]): AgentTurnRunner {
  return turnRunner(async (request) => {
    turns.push(request.turnKey ?? '');
    agents?.push(request.agentId ?? '');
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return 'ok';
  });
}

async function instance(
  url: string,
  id: string,
  options: {
    drain?: boolean;
    jobLeaseMs?: number;
    concurrency?: number;
    claimWhere?: (coordinator: Coordinator, db: Database) => Promise<ClaimWhere | undefined>;
  } = {},
): Promise<Instance> {
  const { db, coordinator, track } = await cluster.open(url, id, {
    coordination: { pollMs: 100, heartbeatMs: 100 },
  });
  await db.migrate('@agentd/webhooks-hmac', webhookMigrationSet);
  const claimWhere = await options.claimWhere?.(coordinator, db);
  const store = track(
    createWebhookStore({ db, coordinator, jobLeaseMs: options.jobLeaseMs ?? 10_000, claimWhere }),
  );
  const turns: string[] = [];
  const agents: string[] = [];
  const drainer =
    options.drain === false
      ? undefined
      : createQueueDrainer({
          store,
          runner: recordingRunner(turns, 2, agents),
          coordinator,
          concurrency: options.concurrency ?? 4,
        });
  if (drainer !== undefined) track({ close: () => drainer.stop() });
  return { db, coordinator, store, drainer, turns, agents };
}

const plan = (n: number) => ({ action: 'agent' as const, message: `m${n}`, sessionKey: `hook:${n}` });

describe.each(testDialects())('webhook queue shared by three instances on $name', ({ url }) => {
  it('runs 300 jobs queued on all three as 300 turns, none twice', async () => {
    const target = await url();
    const instances = [await instance(target, 'a'), await instance(target, 'b'), await instance(target, 'c')];
    for (const each of instances) await each.drainer?.start();
    await Promise.all(
      Array.from({ length: 300 }, async (_, n) => {
        const at = instances[n % 3]!;
        await at.store.accept({ endpoint: 'mapped', mappingId: 'm', deliveryId: `d${n}`, plan: plan(n) });
        at.drainer?.kick();
      }),
    );
    await eventually(async () => {
      const stats = await instances[0]!.store.queueStats();
      return stats.done === 300 ? stats : undefined;
    });
    const turns = instances.flatMap((each) => each.turns);
    expect(turns).toHaveLength(300);
    expect(new Set(turns).size).toBe(300);
    const attempts = await instances[0]!.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM webhook_agent_queue WHERE attempts <> 1',
    );
    expect(Number(attempts?.n)).toBe(0);
  });
});

describe.skipIf(!pgSuitesEnabled())('webhook queue takeover on PostgreSQL', () => {
  it('refuses a service on PostgreSQL without the cluster coordinator', async () => {
    const db = await openDatabase({
      url: await testDialects()
        .find((d) => d.name === 'pg')!
        .url(),
      poolMax: 2,
    });
    try {
      const section = webhooksSectionSchema.parse({ enabled: true });
      await expect(createWebhookService({ db, section })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    } finally {
      await db.close();
    }
  });

  it('takes a job over once after its owner stops renewing, and rejects the stale fence', async () => {
    const target = await testDialects()
      .find((dialect) => dialect.name === 'pg')!
      .url();
    // A claims the job and then stops (no drainer renews its lease): a paused or cut-off owner.
    const a = await instance(target, 'a', { drain: false, jobLeaseMs: 400 });
    const b = await instance(target, 'b', { jobLeaseMs: 400 });
    const c = await instance(target, 'c', { jobLeaseMs: 400 });
    const accepted = await a.store.accept({
      endpoint: 'strict',
      mappingId: 'm',
      deliveryId: 'x',
      plan: plan(1),
    });
    const claimed = await a.store.claimNextJob();
    expect(claimed).toMatchObject({ attempts: 1, fence: 1 });
    expect(accepted).toMatchObject({ jobId: claimed!.id });
    // A peer's start-up recovery leaves a live owner's job alone (today's re-queue would run it twice).
    expect(await b.store.recoverRunningJobs()).toBe(0);
    expect(await b.store.queueStats()).toMatchObject({ running: 1, queued: 0 });
    await b.drainer!.start();
    await c.drainer!.start();
    // While the lease holds, the job is A's: nobody else runs it.
    expect(await b.store.dueJobCount()).toBe(0);
    await eventually(async () => ((await a.store.queueStats()).done === 1 ? true : undefined));
    const turns = [...b.turns, ...c.turns];
    expect(turns).toEqual([`webhook-queue:${claimed!.id}`]);
    const row = await a.db.get<{ attempts: number; fence: number; owner: string | null }>(
      'SELECT attempts, fence, owner FROM webhook_agent_queue WHERE id = ?',
      [claimed!.id],
    );
    // A's attempt counted once, the takeover's once; the job is released at the new fence.
    expect(row).toEqual({ attempts: 2, fence: 2, owner: null });
    // A wakes up and tries to finish: every write under its stale fence is rejected.
    const done = { finishReason: 'stop', responseChars: 1, deliveryStatus: 'not_requested' as const };
    expect(await a.store.completeJob(claimed!.id, done, claimed!.fence)).toBe(false);
    expect(await a.store.failJob(claimed!.id, 'late', undefined, claimed!.fence)).toBe(false);
    expect(await a.store.renewJob(claimed!.id, claimed!.fence)).toBe(false);
    expect((await a.store.queueStats()).done).toBe(1);
  });

  it('keeps a job whose owner renews its lease with that owner', async () => {
    const target = await testDialects()
      .find((dialect) => dialect.name === 'pg')!
      .url();
    const a = await instance(target, 'a', { jobLeaseMs: 300 });
    const b = await instance(target, 'b', { jobLeaseMs: 300 });
    // A's turn outlasts several leases; its drainer renews the claim, so B never takes it.
    a.drainer = createQueueDrainer({
      store: a.store,
      runner: recordingRunner(a.turns, 1200),
      coordinator: a.coordinator,
    });
    await a.drainer.start();
    await a.store.accept({ endpoint: 'strict', mappingId: 'm', plan: plan(2) });
    a.drainer.kick();
    await eventually(() => (a.turns.length === 1 ? true : undefined));
    // B polls the queue every 100 ms through the four leases A's turn lasts.
    await b.drainer!.start();
    await eventually(async () => ((await a.store.queueStats()).done === 1 ? true : undefined));
    expect(a.turns).toHaveLength(1);
    expect(b.turns).toHaveLength(0);
  });
});

describe.skipIf(!pgSuitesEnabled())('webhook queue with a homed agent on PostgreSQL', () => {
  it("leaves a homed agent's jobs to its home instance; other agents' jobs run anywhere", async () => {
    const target = await testDialects()
      .find((dialect) => dialect.name === 'pg')!
      .url();
    const homes: HostAffinity[] = [];
    const homeFilter = async (coordinator: Coordinator, db: Database) => {
      const affinity = await openHostAffinity({ db, coordinator });
      homes.push(affinity);
      return affinity.notHomedElsewhere('agent_id', 'default');
    };
    try {
      const away = await instance(target, 'away', { claimWhere: homeFilter });
      const home = await instance(target, 'home', { claimWhere: homeFilter });
      expect(await homes[1]!.home('coder')).toEqual({ where: 'here' });
      // Queued on the instance that is not the home, before either drains.
      for (let n = 0; n < 20; n += 1) {
        const agentId = n % 2 === 0 ? 'coder' : 'chat';
        await away.store.accept({
          endpoint: 'mapped',
          mappingId: 'm',
          deliveryId: `h${n}`,
          plan: { ...plan(n), agentId },
        });
      }
      await away.drainer?.start();
      await home.drainer?.start();
      away.drainer?.kick();
      home.drainer?.kick();
      await eventually(async () => ((await away.store.queueStats()).done === 20 ? true : undefined));
      expect(away.agents.filter((agent) => agent === 'coder')).toEqual([]);
      expect(home.agents.filter((agent) => agent === 'coder')).toHaveLength(10);
      expect([...away.agents, ...home.agents].filter((agent) => agent === 'chat')).toHaveLength(10);
    } finally {
      for (const affinity of homes) await affinity.close();
    }
  });
});

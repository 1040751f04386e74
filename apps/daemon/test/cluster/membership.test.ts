import { type Database, nowMs } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { CLUSTER_CONFIG, harnessPerTest, refusedStart } from './harness.js';

const harnesses = harnessPerTest();

/** The live holder and fence of the heartbeat singleton every instance renews. */
async function heartbeatHolder(db: Database): Promise<{ owner: string; fence: number } | undefined> {
  const row = await db.get<{ owner: string; fence: number }>(
    `SELECT owner, fence FROM cluster_singletons
      WHERE name = 'cron-wakegate:heartbeat' AND lease_until >= ${nowMs('pg')}`,
  );
  return row === undefined ? undefined : { owner: row.owner, fence: Number(row.fence) };
}

describe.skipIf(!pgSuitesEnabled())('three daemons on one PostgreSQL database', { timeout: 180_000 }, () => {
  it('see each other in gateway.status.cluster, each at the URL it listens on', async () => {
    const harness = await harnesses.open();
    const nodes = await harness.startMany(3);
    for (const node of nodes) {
      const cluster = await harness.status(node);
      expect(cluster.mode).toBe('postgres');
      expect(cluster.instances).toHaveLength(3);
      const self = cluster.instances.find((member) => member.instanceId === cluster.instanceId);
      expect(self?.advertiseUrl).toBe(node.url);
      expect(self?.heartbeatAt).toBeGreaterThanOrEqual(self?.startedAt ?? Number.POSITIVE_INFINITY);
    }
    const urls = (await harness.status(nodes[0]!)).instances.map((member) => member.advertiseUrl).sort();
    expect(urls).toEqual(nodes.map((node) => node.url).sort());
  });

  it('forgets an instance killed with -9 within 15 s, and another takes its singleton over', async () => {
    const harness = await harnesses.open();
    const nodes = await harness.startMany(3);
    const ids = new Map<string, (typeof nodes)[number]>();
    for (const node of nodes) ids.set((await harness.status(node)).instanceId, node);
    const db = await harness.database();
    const holder = await eventually(() => heartbeatHolder(db), 15_000, 250);
    const victim = ids.get(holder.owner)!;
    expect(victim).toBeDefined();
    const killedAt = Date.now();
    await harness.kill(victim);
    const survivor = nodes.find((node) => node !== victim)!;
    await eventually(
      async () => {
        const members = (await harness.status(survivor)).instances.map((member) => member.instanceId);
        return members.length === 2 && !members.includes(holder.owner) ? true : undefined;
      },
      15_000,
      250,
    );
    const next = await eventually(
      async () => {
        const now = await heartbeatHolder(db);
        return now !== undefined && now.owner !== holder.owner ? now : undefined;
      },
      15_000,
      250,
    );
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(ids.has(next.owner)).toBe(true);
    expect(next.fence).toBeGreaterThan(holder.fence);
  });

  it('refuses a join whose config differs in a section, naming it', async () => {
    const harness = await harnesses.open();
    await harness.startMany(2);
    const message = await refusedStart(
      harness.start('odd', { config: { ...CLUSTER_CONFIG, cron: { maxConcurrentRuns: 7 } } }),
    );
    expect(message).toMatch(/configuration differs from live instance \S+ in: cron\b/);
  });

  it('joins a differing config with cluster.allowConfigSkew, and ignores instance-local entries', async () => {
    const harness = await harnesses.open();
    await harness.start('a');
    // Another port and instance id are this instance's own: no skew.
    const local = await harness.start('b', {
      config: { ...CLUSTER_CONFIG, cluster: { leaseMs: 3000, instanceId: 'bee' }, gateway: { port: 0 } },
    });
    expect((await harness.status(local)).instanceId).toBe('bee');
    const skewed = await harness.start('c', {
      config: {
        ...CLUSTER_CONFIG,
        cluster: { leaseMs: 3000, allowConfigSkew: true },
        cron: { maxConcurrentRuns: 7 },
      },
    });
    expect((await harness.status(skewed)).instances).toHaveLength(3);
  });

  it('refuses a second instance on one data dir', async () => {
    const harness = await harnesses.open();
    const [first] = await harness.startMany(1);
    const message = await refusedStart(harness.start('twin', { dataDir: first!.dataDir }));
    expect(message).toMatch(/lock|already|in use/i);
    expect((await harness.status(first!)).instances).toHaveLength(1);
  });
});

import { createHttpClient } from '@agentd/client';
import type { Database } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers.js';
import { type ClusterNode, harnessPerTest } from './harness.js';
import { clusterScale } from './scale.js';

// The design's scale (50 jobs every second, 60 s healthy, then 60 s with a kill -9 at 20 s and a
// SIGSTOP of 15 s) with AGENTD_CLUSTER_SCALE=full; scaled down by default to fit a 2-core CI
// machine (20 jobs, 10 s healthy, then 12 s with the kill and a 6 s SIGSTOP).
const SCALE = clusterScale({
  full: { jobs: 50, healthyMs: 60_000, killAtMs: 20_000, stopMs: 15_000, afterMs: 60_000 },
  ci: { jobs: 20, healthyMs: 10_000, killAtMs: 0, stopMs: 6000, afterMs: 12_000 },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const harnesses = harnessPerTest();

/** Adds the jobs round-robin through every instance, as clients behind a balancer would. */
async function addJobs(nodes: ClusterNode[]): Promise<void> {
  const clients = nodes.map((node) => createHttpClient({ url: node.url, token: ADMIN_TOKEN }));
  for (let index = 0; index < SCALE.jobs; index += 1) {
    await clients[index % clients.length]!.call('cron.add', {
      name: `tick-${index}`,
      message: `tick ${index}`,
      schedule: { kind: 'interval', everyMs: 1000 },
    });
  }
}

/** Every run row's slot, by job: `[jobId, scheduledAtMs, rows]`. */
async function slots(
  db: Database,
): Promise<Array<{ job_id: string; scheduled_at_ms: number; rows: number }>> {
  const rows = await db.query<{ job_id: string; scheduled_at_ms: number; rows: number }>(
    `SELECT job_id, scheduled_at_ms, COUNT(*) AS rows FROM cron_runs
      WHERE scheduled_at_ms IS NOT NULL GROUP BY job_id, scheduled_at_ms ORDER BY job_id, scheduled_at_ms`,
  );
  return rows.map((row) => ({
    ...row,
    scheduled_at_ms: Number(row.scheduled_at_ms),
    rows: Number(row.rows),
  }));
}

describe.skipIf(!pgSuitesEnabled())('cron on three instances', { timeout: 600_000 }, () => {
  it(`fires each slot once and none missing on three instances (${SCALE.jobs} jobs); none twice after a kill -9 and a SIGSTOP past the lease`, async () => {
    const harness = await harnesses.open('agentd_cluster_cron');
    const nodes = await harness.startMany(3);
    await addJobs(nodes);
    await sleep(SCALE.healthyMs);

    const healthy = await slots(await harness.database());
    expect(healthy.filter((slot) => slot.rows > 1)).toEqual([]);
    const byJob = new Map<string, number[]>();
    for (const slot of healthy)
      byJob.set(slot.job_id, [...(byJob.get(slot.job_id) ?? []), slot.scheduled_at_ms]);
    expect(byJob.size).toBe(SCALE.jobs);
    for (const times of byJob.values()) {
      expect(times.length).toBeGreaterThanOrEqual(SCALE.healthyMs / 2000);
      // One slot a second, none skipped between the first and the last.
      for (let index = 1; index < times.length; index += 1)
        expect(times[index]! - times[index - 1]!).toBe(1000);
    }

    // Faults: one instance killed with -9, another frozen past its lease, then resumed.
    await sleep(SCALE.killAtMs);
    await harness.kill(nodes[1]!);
    harness.pause(nodes[2]!);
    await sleep(SCALE.stopMs);
    harness.resume(nodes[2]!);
    await sleep(SCALE.afterMs - SCALE.killAtMs - SCALE.stopMs);

    const after = await slots(await harness.database());
    expect(after.filter((slot) => slot.rows > 1)).toEqual([]);
    const last = new Map<string, number>();
    for (const slot of after)
      last.set(slot.job_id, Math.max(last.get(slot.job_id) ?? 0, slot.scheduled_at_ms));
    const lastBefore = Math.max(...healthy.map((slot) => slot.scheduled_at_ms));
    // Every job kept firing on the instances left.
    for (const time of last.values()) expect(time).toBeGreaterThan(lastBefore + SCALE.afterMs - 7000);
  });
});

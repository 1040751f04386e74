import { createHttpClient } from '@agentd/client';
import type { Database } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers.js';
import { type ClusterNode, harnessPerTest } from './harness.js';

// Scaled down from the design's 50 jobs for 60 s to fit a 2-core CI machine: 20 jobs every
// second for about 20 s, on three instances.
const JOBS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const harnesses = harnessPerTest();

async function addJobs(node: ClusterNode): Promise<void> {
  const client = createHttpClient({ url: node.url, token: ADMIN_TOKEN });
  for (let index = 0; index < JOBS; index += 1) {
    await client.call('cron.add', {
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

describe.skipIf(!pgSuitesEnabled())('cron on three instances', { timeout: 300_000 }, () => {
  it('fires each slot once and none missing on three instances; none twice after a kill -9 and a SIGSTOP past the lease', async () => {
    const harness = await harnesses.open('agentd_cluster_cron');
    const nodes = await harness.startMany(3);
    await addJobs(nodes[0]!);
    await sleep(10_000);

    const healthy = await slots(await harness.database());
    expect(healthy.filter((slot) => slot.rows > 1)).toEqual([]);
    const byJob = new Map<string, number[]>();
    for (const slot of healthy)
      byJob.set(slot.job_id, [...(byJob.get(slot.job_id) ?? []), slot.scheduled_at_ms]);
    expect(byJob.size).toBe(JOBS);
    for (const times of byJob.values()) {
      expect(times.length).toBeGreaterThanOrEqual(5);
      // One slot a second, none skipped between the first and the last.
      for (let index = 1; index < times.length; index += 1)
        expect(times[index]! - times[index - 1]!).toBe(1000);
    }

    // Faults: one instance killed with -9, another frozen past its lease, then resumed.
    await harness.kill(nodes[1]!);
    harness.pause(nodes[2]!);
    await sleep(6000);
    harness.resume(nodes[2]!);
    await sleep(6000);

    const after = await slots(await harness.database());
    expect(after.filter((slot) => slot.rows > 1)).toEqual([]);
    const last = new Map<string, number>();
    for (const slot of after)
      last.set(slot.job_id, Math.max(last.get(slot.job_id) ?? 0, slot.scheduled_at_ms));
    const lastBefore = Math.max(...healthy.map((slot) => slot.scheduled_at_ms));
    // Every job kept firing on the instances left.
    for (const time of last.values()) expect(time).toBeGreaterThan(lastBefore + 5000);
  });
});

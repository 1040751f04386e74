import { createHmac } from 'node:crypto';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers.js';
import { CLUSTER_CONFIG, harnessPerTest } from './harness.js';
import { clusterScale } from './scale.js';

const TOKEN = 'cluster-webhook-token-0123456789abcdef';
// The design's 1,000 posts with AGENTD_CLUSTER_SCALE=full; 60 by default for a 2-core CI
// machine. Every tenth is resent either way.
const POSTS = clusterScale({ full: 1000, ci: 60 });

const harnesses = harnessPerTest();

/** A signed strict-endpoint post (HMAC-SHA256 of the raw body, hex) with its delivery id. */
async function post(url: string, index: number): Promise<number> {
  const body = JSON.stringify({ event: 'deploy.finished', source: 'ci', data: { build: index } });
  const response = await fetch(`${url}/hooks/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-webhook-signature': createHmac('sha256', TOKEN).update(body).digest('hex'),
      'x-webhook-id': `delivery-${index}`,
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

describe.skipIf(!pgSuitesEnabled())('webhooks on three instances', { timeout: 300_000 + POSTS * 500 }, () => {
  it(`queues one job per accepted delivery (${POSTS} posts), each run once, when posts and resends are spread over the instances`, async () => {
    const harness = await harnesses.open('agentd_cluster_hooks');
    const nodes = await harness.startMany(3, {
      ...CLUSTER_CONFIG,
      webhooks: { enabled: true, token: TOKEN },
    });
    const statuses: number[] = [];
    for (let index = 0; index < POSTS; index += 1) {
      statuses.push(await post(nodes[index % 3]!.url, index));
      // Every tenth delivery is sent again, with the same id, to the next instance.
      if (index % 10 === 0) statuses.push(await post(nodes[(index + 1) % 3]!.url, index));
    }
    expect(statuses.every((status) => status === 200)).toBe(true);

    const db = await harness.database();
    const jobs = await eventually(
      async () => {
        const rows = await db.query<{ delivery_id: string; status: string; attempts: number }>(
          'SELECT delivery_id, status, attempts FROM webhook_agent_queue ORDER BY id',
        );
        return rows.length >= POSTS && rows.every((row) => row.status === 'done') ? rows : undefined;
      },
      120_000 + POSTS * 300,
      500,
    );
    expect(jobs).toHaveLength(POSTS);
    expect(new Set(jobs.map((job) => job.delivery_id)).size).toBe(POSTS);
    // Each job was claimed and run once: no second attempt on another instance.
    expect(jobs.filter((job) => Number(job.attempts) !== 1)).toEqual([]);
  });
});

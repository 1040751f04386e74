/**
 * Cluster benchmark: agentd instances as child processes on one PostgreSQL database.
 *
 *   npx -y pnpm@10 bench cluster          (from the repository root; builds first)
 *   cd apps/daemon && npx tsx bench/run-cluster.ts [--smoke] [--part cron]
 *
 * - cron: fire latency on three instances, from a slot's due time to its run row's fire time
 *   (`cron_runs.ts - scheduled_at_ms`: the winning instance's clock when its timer fired, just
 *   before its compare-and-set on the due time won), with NOTIFY and with NOTIFY suppressed
 *   (`AGENTD_TEST_CLUSTER_NO_NOTIFY=1` on every instance).
 *
 * PostgreSQL: `AGENTD_BENCH_PG_URL` when set, else a throwaway server started with
 * `tooling/scripts/pg-test-server.sh`. Figures are reported, not gated: on two cores the aim is
 * the coordination's overhead, not scaling.
 */
import { openDatabase } from '@agentd/storage';
import { createPgDatabase, postgres } from '../../../packages/storage/bench/pg-server.js';
import { type BenchNode, printLatency, startNodes, stopNodes } from './cluster-nodes.js';

const smoke = process.argv.includes('--smoke');
/** Which parts run (`--part cron`, repeatable); all when none is named. */
const PARTS = process.argv.flatMap((arg, i) => (process.argv[i - 1] === '--part' ? [arg] : []));
const runs = (part: string) => PARTS.length === 0 || PARTS.includes(part);
const NO_NOTIFY = { AGENTD_TEST_CLUSTER_NO_NOTIFY: '1' };
const BASE_CONFIG = { memory: { enabled: false } };

const CRON_JOBS = 20;
const CRON_SECONDS = smoke ? 6 : 30;
/** Slots this soon after the last job was added are left out (instances still loading them). */
const CRON_SETTLE_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Fire latencies (ms) of every slot of 20 one-second jobs on three instances. */
async function cronLatencies(serverUrl: string, name: string, env: NodeJS.ProcessEnv): Promise<number[]> {
  const url = await createPgDatabase(serverUrl, name);
  const nodes: BenchNode[] = await startNodes(3, url, BASE_CONFIG, env);
  const db = await openDatabase({ url, poolMax: 1 });
  try {
    const addedAt = Date.now();
    for (let index = 0; index < CRON_JOBS; index += 1) {
      await nodes[0]!.client.call('cron.add', {
        name: `bench-${index}`,
        message: `tick ${index}`,
        schedule: { kind: 'interval', everyMs: 1000 },
      });
    }
    const from = Date.now() + CRON_SETTLE_MS;
    await sleep(CRON_SETTLE_MS + CRON_SECONDS * 1000);
    // Slots due in the window; the last second's may still be firing, so it is left out.
    const rows = await db.query<{ ts: number; scheduled_at_ms: number }>(
      'SELECT ts, scheduled_at_ms FROM cron_runs WHERE scheduled_at_ms >= ? AND scheduled_at_ms < ?',
      [Math.max(from, addedAt), Date.now() - 1000],
    );
    return rows.map((row) => Number(row.ts) - Number(row.scheduled_at_ms));
  } finally {
    await db.close();
    await stopNodes(nodes);
  }
}

const server = postgres();
try {
  if (runs('cron')) {
    console.log(
      `\ncron fire latency, due to fire, 3 instances, ${CRON_JOBS} jobs every second for ${CRON_SECONDS} s`,
    );
    printLatency('with NOTIFY', await cronLatencies(server.url, 'agentd_bench_cron_notify', {}));
    printLatency('NOTIFY suppressed', await cronLatencies(server.url, 'agentd_bench_cron_poll', NO_NOTIFY));
  }
} finally {
  server.stop();
}

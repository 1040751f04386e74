/**
 * Cluster benchmark: agentd instances as child processes on one PostgreSQL database.
 *
 *   npx -y pnpm@10 bench cluster          (from the repository root; builds first)
 *   cd apps/daemon && npx tsx bench/run-cluster.ts [--smoke] [--part cron|turns|approvals]
 *
 * - turns: N = 1, 2, 3 instances, a fake OpenAI-compatible provider that answers after 200 ms,
 *   64 concurrent sessions spread over the instances: turns/s and p50/p99 per N, with the
 *   ratios N=2/N=1 and N=3/N=1.
 * - approvals: a turn on one instance waits on an approval decided on another; the time from
 *   the decision's answer to the turn's, with NOTIFY and with NOTIFY suppressed.
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
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { createPgDatabase, postgres } from '../../../packages/storage/bench/pg-server.js';
import { printComparison } from '../../../tooling/bench/harness.js';
import { APPROVALS_CONFIG, approvalWakeUps, sessionTurns, type TurnLoad } from './cluster-loads.js';
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

const SESSIONS = 64;
const PROVIDER_MS = 200;
const TURN_SECONDS = smoke ? 5 : 30;
const WARM_SECONDS = smoke ? 2 : 5;
const APPROVAL_SAMPLES = smoke ? 3 : 20;
const MODEL_KEY = 'sk-bench-cluster-model-0123';

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

/** Turns of 64 sessions on `count` instances, after a warm-up that opens every session. */
async function turns(serverUrl: string, providerUrl: string, count: number): Promise<TurnLoad> {
  const url = await createPgDatabase(serverUrl, `agentd_bench_turns_${count}`);
  const config = {
    ...BASE_CONFIG,
    providers: {
      entries: {
        slow: {
          type: 'openai-compatible',
          baseUrl: providerUrl,
          apiKey: '${secret:MODEL_KEY}',
          models: ['gpt-fake'],
        },
      },
    },
    agents: { entries: { solo: { name: 'Solo', provider: 'slow' } } },
  };
  const nodes = await startNodes(count, url, config, { MODEL_KEY });
  try {
    await sessionTurns(nodes, 'solo', SESSIONS, WARM_SECONDS * 1000, 'run');
    const load = await sessionTurns(nodes, 'solo', SESSIONS, TURN_SECONDS * 1000, 'run');
    if (load.failures.size > 0) {
      console.log(`\nN = ${count}: failed turns ${JSON.stringify(Object.fromEntries(load.failures))}`);
      for (const node of nodes) for (const line of node.problems()) console.log(`  ${line}`);
    }
    return load;
  } finally {
    await stopNodes(nodes);
  }
}

/** Approval wake-ups on two instances (the waiter and the decider). */
async function approvals(serverUrl: string, name: string, env: NodeJS.ProcessEnv): Promise<number[]> {
  const url = await createPgDatabase(serverUrl, name);
  const nodes = await startNodes(2, url, { ...BASE_CONFIG, ...APPROVALS_CONFIG }, env);
  try {
    return await approvalWakeUps(nodes[0]!, nodes[1]!, APPROVAL_SAMPLES);
  } finally {
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
  if (runs('turns')) {
    const model = await startFakeOpenAi({
      apiKey: MODEL_KEY,
      respond: () => ({ text: 'ok', hangMs: PROVIDER_MS }),
    });
    try {
      const loads: Array<[number, TurnLoad]> = [];
      for (const count of [1, 2, 3]) loads.push([count, await turns(server.url, model.url, count)]);
      printComparison(
        `agent turns/s, ${SESSIONS} concurrent sessions, provider answering after ${PROVIDER_MS} ms, ${TURN_SECONDS} s each`,
        loads.map(([count, load]) => ({
          name: `N = ${count}`,
          ops: load.turns,
          ms: load.ms,
          opsPerSec: (load.turns * 1000) / load.ms,
        })),
      );
      for (const [count, load] of loads) printLatency(`turn latency, N = ${count}`, load.latencies);
    } finally {
      await model.close();
    }
  }
  if (runs('approvals')) {
    console.log(`\napproval wake-up, decided on B, turn waiting on A (${APPROVAL_SAMPLES} samples each)`);
    printLatency('with NOTIFY', await approvals(server.url, 'agentd_bench_approvals_notify', {}));
    printLatency('NOTIFY suppressed', await approvals(server.url, 'agentd_bench_approvals_poll', NO_NOTIFY));
  }
} finally {
  server.stop();
}

import { createHmac } from 'node:crypto';
import type { Database } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeProvider,
  startFakeOpenAi,
} from '../../../../packages/agent-runtime/test/fake-providers.js';
import { eventually, rpcClient, sessionMessages } from '../helpers.js';
import { type ClusterHarness, type ClusterNode, clusterHarness, modelClusterConfig } from './harness.js';

const TOKEN = 'cluster-takeover-token-0123456789abcdef';
const MODEL_KEY = 'sk-cluster-takeover-model-0123';
// A delivery's first model call answers after this long, so a fault lands while the turn runs;
// a re-run's call answers at once.
const FIRST_CALL_MS = 4000;

let harness: ClusterHarness | undefined;
let model: FakeProvider | undefined;
let db: Database | undefined;
let nodes: ClusterNode[] = [];
/** Instance id → node. */
const byId = new Map<string, ClusterNode>();

/** The delivery a model request is for (the mapping's message names it). */
function deliveryOf(body: Record<string, unknown> | undefined): string | undefined {
  const messages = (body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const text = messages.find((message) => message.role === 'user')?.content;
  return typeof text === 'string' ? /delivery (\S+)/.exec(text)?.[1] : undefined;
}

/** Model calls made for `delivery` so far. */
const calls = (delivery: string) =>
  model!.requests.filter((request) => deliveryOf(request.body) === delivery).length;

beforeAll(async () => {
  if (!pgSuitesEnabled()) return;
  const seen = new Set<string>();
  model = await startFakeOpenAi({
    apiKey: MODEL_KEY,
    respond: (body) => {
      const delivery = deliveryOf(body) ?? '';
      const first = !seen.has(delivery);
      seen.add(delivery);
      return first ? { text: `answer ${delivery}`, hangMs: FIRST_CALL_MS } : { text: `answer ${delivery}` };
    },
  });
  harness = await clusterHarness('agentd_cluster_takeover');
  const config = {
    ...modelClusterConfig(model.url, { hooked: { name: 'Hooked', provider: 'oai' } }),
    webhooks: {
      enabled: true,
      token: TOKEN,
      mappings: [
        {
          id: 'slow',
          agentId: 'hooked',
          sessionKey: 'hook:slow:{{payload.source}}',
          messageTemplate: 'delivery {{payload.source}}',
        },
      ],
    },
  };
  nodes = await harness.startMany(3, config, { MODEL_KEY });
  for (const node of nodes) byId.set((await harness.status(node)).instanceId, node);
  db = await harness.database();
}, 180_000);
afterAll(async () => {
  await harness?.cleanup();
  await model?.close();
});

interface JobRow {
  id: number;
  status: string;
  attempts: number;
  owner: string | null;
  finished_at: number | null;
  response_chars: number | null;
  delivery_status: string | null;
  last_error: string | null;
}

async function job(delivery: string): Promise<JobRow | undefined> {
  const row = await db!.get<JobRow>(
    `SELECT id, status, attempts, owner, finished_at, response_chars, delivery_status, last_error
       FROM webhook_agent_queue WHERE delivery_id = ?`,
    [delivery],
  );
  return row === undefined
    ? undefined
    : {
        ...row,
        id: Number(row.id),
        attempts: Number(row.attempts),
        finished_at: row.finished_at === null ? null : Number(row.finished_at),
      };
}

/** Posts one signed delivery (its id is also its `source`) to `node`. */
async function post(node: ClusterNode, delivery: string): Promise<void> {
  const body = JSON.stringify({ event: 'deploy.finished', source: delivery, data: {} });
  const response = await fetch(`${node.url}/hooks/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-webhook-signature': createHmac('sha256', TOKEN).update(body).digest('hex'),
      'x-webhook-id': delivery,
    },
    body,
  });
  await response.arrayBuffer();
  expect(response.status).toBe(200);
}

/** Posts `delivery` and answers the node whose turn for it is in the model's hands. */
async function startTurn(delivery: string, via: ClusterNode): Promise<ClusterNode> {
  await post(via, delivery);
  await eventually(() => (calls(delivery) === 1 ? true : undefined), 30_000, 50);
  const row = await job(delivery);
  expect(row).toMatchObject({ status: 'running', attempts: 1 });
  const owner = byId.get(row!.owner ?? '');
  expect(owner).toBeDefined();
  return owner!;
}

/** Waits for `delivery`'s job to be done, and answers its row. */
const done = (delivery: string) =>
  eventually(
    async () => {
      const row = await job(delivery);
      return row?.status === 'done' ? row : undefined;
    },
    60_000,
    100,
  );

/** The session of `delivery` holds one question and one answer: one turn committed. */
async function oneTurn(delivery: string, via: ClusterNode): Promise<void> {
  const messages = await sessionMessages(rpcClient(via.url), `hook:slow:${delivery}`);
  expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
}

describe.skipIf(!pgSuitesEnabled())(
  'webhook jobs when their instance fails mid-turn',
  { timeout: 180_000 },
  () => {
    it('re-runs a job whose instance is killed with -9 mid-turn once, on another instance', async () => {
      const owner = await startTurn('killed-1', nodes[0]!);
      await harness!.kill(owner);
      nodes = nodes.filter((node) => node !== owner);
      const row = await done('killed-1');
      // The killed turn's call and one re-run: the takeover claimed it once.
      expect(calls('killed-1')).toBe(2);
      expect(row).toMatchObject({ attempts: 2, owner: null, last_error: null });
      await oneTurn('killed-1', nodes[0]!);
    });

    it("refuses the writes of an instance stopped past its lease: its job completes elsewhere once, and the old owner's completion is rejected after SIGCONT", async () => {
      const owner = await startTurn('stopped-1', nodes[0]!);
      harness!.pause(owner);
      let resumed = false;
      try {
        const row = await done('stopped-1');
        expect(calls('stopped-1')).toBe(2);
        expect(row).toMatchObject({ attempts: 2, owner: null, last_error: null });
        harness!.resume(owner);
        resumed = true;
        // The old owner wakes with its turn still open: its lease renewal or its completion finds
        // the claim gone and is refused, which it logs.
        await eventually(
          () =>
            /webhook job claim lost|webhook agent turn failed/.test(owner.process.stdout())
              ? true
              : undefined,
          30_000,
          100,
        );
        // Nothing it did after waking reached the job row or the session.
        expect(await job('stopped-1')).toEqual(row);
        expect(calls('stopped-1')).toBe(2);
        await oneTurn('stopped-1', nodes.find((node) => node !== owner)!);
      } finally {
        if (!resumed) harness!.resume(owner);
      }
    });
  },
);

import { createHttpClient } from '@agentd/client';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../../packages/channels/test/fake-server.js';
import { ADMIN_TOKEN } from '../helpers.js';
import { CLUSTER_CONFIG, type ClusterHarness, type ClusterNode, clusterHarness } from './harness.js';

// Memory across instances: two daemons on one PostgreSQL with memory on and an
// OpenAI-compatible embeddings endpoint, so both recall lanes run. The full-text lane reads the
// shared tables; the vector lane reads each instance's own index, which must follow the other's
// writes.

const DIMENSIONS = 8;
/** Words of one meaning share a direction; nothing else does (dimension 7 is "other"). */
const CONCEPTS = [
  ['peanut', 'peanuts', 'legume', 'legumes'],
  ['kingfisher', 'kingfishers', 'heron', 'bird'],
];

/**
 * An embeddings server speaking OpenAI's `POST /v1/embeddings` (`input` a string or a list,
 * answered as `{object: 'list', data: [{object: 'embedding', index, embedding}], model, usage}`).
 */
async function fakeEmbeddings() {
  return listenLocal((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(raw) as { input: string | string[]; model: string };
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      const data = inputs.map((text, index) => {
        const vector = new Array<number>(DIMENSIONS).fill(0);
        const words = text.toLowerCase().split(/[^a-z]+/);
        CONCEPTS.forEach((group, dimension) => {
          if (words.some((word) => group.includes(word))) vector[dimension] = 1;
        });
        if (Math.max(...vector) === 0) vector[DIMENSIONS - 1] = 1;
        return { object: 'embedding', index, embedding: vector };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          object: 'list',
          data,
          model: body.model,
          usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
        }),
      );
    });
  });
}

/**
 * Polls `probe` until it answers true, failing when none asked within `deadlineMs` did; answers
 * when the probe that succeeded was asked, after the call. That is how stale an instance's view
 * was: a search that takes long on a loaded machine does not count against it.
 */
async function within(deadlineMs: number, probe: () => Promise<boolean>): Promise<number> {
  const began = performance.now();
  for (;;) {
    const asked = performance.now() - began;
    if (asked > deadlineMs) throw new Error(`not true within ${deadlineMs} ms`);
    if (await probe()) return asked;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let harness: ClusterHarness | undefined;
let embeddings: Awaited<ReturnType<typeof fakeEmbeddings>> | undefined;
let nodes: ClusterNode[] = [];
const admin = (node: ClusterNode) => createHttpClient({ url: node.url, token: ADMIN_TOKEN });
const foundIds = async (node: ClusterNode, query: string): Promise<string[]> =>
  (
    (await admin(node).call('memory.search', { query, agentId: 'shared' })) as {
      results: Array<{ id: string }>;
    }
  ).results.map((entry) => entry.id);

describe.skipIf(!pgSuitesEnabled())('memory on two instances of one PostgreSQL', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    embeddings = await fakeEmbeddings();
    harness = await clusterHarness('agentd_cluster_memory');
    nodes = await harness.startMany(2, {
      ...CLUSTER_CONFIG,
      memory: {
        enabled: true,
        embedder: {
          provider: 'openai',
          baseUrl: `${embeddings.url}/v1`,
          model: 'concepts',
          dimensions: DIMENSIONS,
        },
      },
    });
    // A first search loads the recall's word lists: warmed up here, so the deadlines below
    // measure how soon a write is visible, not a cold start.
    for (const node of nodes) await foundIds(node, 'warming up the river');
  }, 120_000);

  afterAll(async () => {
    await harness?.cleanup();
    await embeddings?.close();
  }, 60_000);

  it('finds a memory stored on A from B within 1 s, by its words and by its meaning', async () => {
    const [a, b] = nodes as [ClusterNode, ClusterNode];
    const byWords = (await admin(a).call('memory.store', {
      content: 'Kingfishers nest in river banks',
      agentId: 'shared',
    })) as { id: string };
    const lexical = await within(1000, async () =>
      (await foundIds(b, 'kingfisher river')).includes(byWords.id),
    );
    expect(lexical).toBeLessThan(1000);

    // No word in common with the question: only B's vector index can find it.
    const byMeaning = (await admin(a).call('memory.store', {
      content: 'The user is allergic to peanuts',
      agentId: 'shared',
    })) as { id: string };
    const vector = await within(1000, async () => (await foundIds(b, 'legume')).includes(byMeaning.id));
    expect(vector).toBeLessThan(1000);
  });

  it('loses no acknowledged memory write when A is killed with -9 while writing', async () => {
    const [a, b] = nodes as [ClusterNode, ClusterNode];
    const acknowledged: string[] = [];
    let killed = false;
    // Four writers in a row each, until the kill: every answer received is an acknowledged write.
    const writer = async (lane: number) => {
      for (let index = 0; !killed; index += 1) {
        try {
          const { id } = (await admin(a).call('memory.store', {
            content: `note ${lane}-${index} about the garden`,
            agentId: 'shared',
          })) as { id: string };
          acknowledged.push(id);
        } catch {
          return;
        }
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await within(30_000, async () => acknowledged.length >= 20);
    killed = true;
    await harness!.kill(a);
    await Promise.all(writers);
    const exported = (await admin(b).call('memory.export', { agentId: 'shared' })) as {
      entries: Array<{ id: string }>;
    };
    const present = new Set(exported.entries.map((entry) => entry.id));
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);
    expect(acknowledged.filter((id) => !present.has(id))).toEqual([]);
  });
});

import { pgSuitesEnabled } from '@agentd/storage/testing';
import { describe, expect, it } from 'vitest';
import {
  type FakeProvider,
  startFakeOpenAi,
} from '../../../../packages/agent-runtime/test/fake-providers.js';
import { rpcClient, sessionMessages } from '../helpers.js';
import { harnessPerTest, modelClusterConfig } from './harness.js';

const MODEL_KEY = 'sk-cluster-session-model-0123';
// The design's 3 × 20 concurrent turns on one session.
const PER_INSTANCE = 20;

let model: FakeProvider | undefined;
const harnesses = harnessPerTest(async () => {
  await model?.close();
  model = undefined;
});

describe.skipIf(!pgSuitesEnabled())("a session's turns on three instances", { timeout: 300_000 }, () => {
  it('runs 3 × 20 concurrent turns of one session one at a time: each model call sees the whole history before it', async () => {
    // Several chunks per answer, so a turn takes a while and overlapping turns would show.
    model = await startFakeOpenAi({
      apiKey: MODEL_KEY,
      respond: () => ({ text: 'one two three four', chunkDelayMs: 5 }),
    });
    const harness = await harnesses.open('agentd_cluster_sessions');
    const config = modelClusterConfig(model.url, { solo: { name: 'Solo', provider: 'oai' } });
    const nodes = await harness.startMany(3, config, { MODEL_KEY });
    const clients = nodes.map((node) => rpcClient(node.url));
    await Promise.all(
      clients.flatMap((client, instance) =>
        Array.from({ length: PER_INSTANCE }, (_, n) =>
          client.call('agent.execute', {
            agentId: 'solo',
            sessionKey: 'shared',
            message: `q${instance}-${n}`,
          }),
        ),
      ),
    );
    // Turn k (in the order the model was called) saw the k-1 turns before it, question and answer
    // each: two turns at once would send the same history twice.
    const seen = model.requests
      .filter((request) => Array.isArray(request.body?.messages))
      .map(
        (request) =>
          (request.body!.messages as Array<{ role: string }>).filter((m) => m.role !== 'system').length,
      )
      .sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: 3 * PER_INSTANCE }, (_, k) => 2 * k + 1));
    const messages = await sessionMessages(clients[0]!, 'shared');
    expect(messages).toHaveLength(6 * PER_INSTANCE);
    expect(messages.map((message) => message.role)).toEqual(
      Array.from({ length: 6 * PER_INSTANCE }, (_, i) => (i % 2 === 0 ? 'user' : 'assistant')),
    );
    expect(new Set(messages.filter((m) => m.role === 'user').map((m) => m.content)).size).toBe(
      3 * PER_INSTANCE,
    );
  });
});

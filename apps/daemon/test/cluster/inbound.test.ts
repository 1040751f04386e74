import { openDatabase } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeProvider,
  startFakeOpenAi,
} from '../../../../packages/agent-runtime/test/fake-providers.js';
import {
  type FakeTelegram,
  groupMessage,
  startFakeTelegram,
} from '../../../../packages/channels/test/fake-telegram.js';
import { eventually, openAiProviders } from '../helpers.js';
import { CLUSTER_CONFIG, type ClusterHarness, type ClusterNode, clusterHarness } from './harness.js';

const TOKEN = '123456:cluster-inbound-telegram-token';
const SECRET = 'cluster-inbound-webhook-secret';
const MODEL_KEY = 'sk-cluster-inbound-model-0123';
const CHAT = -42;

let harness: ClusterHarness | undefined;
let telegram: FakeTelegram | undefined;
let model: FakeProvider | undefined;
let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
let config: Record<string, unknown>;
/** Model requests per inbound text: the first of a `hold:` text waits until {@link release}. */
const asked = new Map<string, number>();
const gates = new Map<string, { held: Promise<void>; release: () => void }>();
function gate(text: string) {
  let found = gates.get(text);
  if (found === undefined) {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    found = { held, release };
    gates.set(text, found);
  }
  return found;
}
const release = (text: string) => gate(text).release();

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.filter((message) => message.role === 'user').at(-1);
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

beforeAll(async () => {
  if (!pgSuitesEnabled()) return;
  telegram = await startFakeTelegram({ token: TOKEN });
  model = await startFakeOpenAi({
    apiKey: MODEL_KEY,
    respond: (body) => {
      const text = lastUserText(body);
      const count = (asked.get(text) ?? 0) + 1;
      asked.set(text, count);
      return {
        text: `answer to ${text}`,
        ...(text.startsWith('hold:') && count === 1 ? { hold: gate(text).held } : {}),
      };
    },
  });
  harness = await clusterHarness('agentd_cluster_inbound');
  db = await openDatabase({ url: harness.databaseUrl, poolMax: 1 });
  config = {
    ...CLUSTER_CONFIG,
    providers: openAiProviders('oai', model.url, 'MODEL_KEY', ['gpt-fake']),
    agents: { entries: { helper: { name: 'Helper', provider: 'oai' } } },
    channels: {
      telegram: {
        enabled: true,
        botToken: TOKEN,
        apiBaseUrl: telegram.url,
        agentId: 'helper',
        allowFrom: ['100'],
        mode: 'webhook',
        // The load balancer's address; the test posts to each instance itself.
        webhookUrl: 'https://bot.example.com/channels/telegram/webhook',
        webhookSecret: SECRET,
      },
    },
  };
}, 60_000);
afterAll(async () => {
  for (const { release: open } of gates.values()) open();
  await db?.close();
  await harness?.cleanup();
  await model?.close();
  await telegram?.close();
});

const start = (name: string) => harness!.start(name, { config, env: { MODEL_KEY } });

/** Posts a Telegram update to `node`'s webhook as the platform (behind a load balancer) would. */
async function post(node: ClusterNode, messageId: number, text: string): Promise<void> {
  const response = await fetch(`${node.url}/channels/telegram/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
    body: JSON.stringify({ update_id: messageId, ...groupMessage(messageId, CHAT, 100, text) }),
  });
  await response.arrayBuffer();
  expect(response.status).toBe(200);
}

/** The journal row of message `messageId`: its stage, turns begun, and the instance holding it. */
async function journal(messageId: number) {
  const [row] = await db!.query<{ stage: string; attempts: number; owner?: string | null }>(
    'SELECT * FROM channel_inbound WHERE inbound_key = ?',
    [`telegram:${CHAT}:${messageId}`],
  );
  return row && { stage: row.stage, attempts: Number(row.attempts), owner: row.owner ?? null };
}

/** The replies Telegram received to message `messageId`. */
const repliesTo = (messageId: number) =>
  telegram!
    .of('sendMessage')
    .filter(
      (call) =>
        (call.params.reply_parameters as { message_id?: number } | undefined)?.message_id === messageId,
    );

describe.skipIf(!pgSuitesEnabled())('channel inbound turns on two instances', { timeout: 180_000 }, () => {
  let a: ClusterNode;

  it("leaves a live instance's in-flight inbound message alone when another instance starts", async () => {
    a = await start('a');
    const idOfA = (await harness!.status(a)).instanceId;
    await post(a, 1, 'hold: first');
    await eventually(async () => (asked.get('hold: first') === 1 ? true : undefined), 30_000);
    expect(await journal(1)).toMatchObject({ stage: 'pending', attempts: 1 });
    // B's start resumes what is left unfinished: A's message is A's, held under a live lease,
    // so B begins no second turn for it.
    await start('b');
    expect(await journal(1)).toMatchObject({ stage: 'pending', attempts: 1 });
    expect((await journal(1))?.owner).toBe(idOfA);
    release('hold: first');
    await eventually(async () => ((await journal(1))?.stage === 'done' ? true : undefined), 30_000);
    expect(await journal(1)).toEqual({ stage: 'done', attempts: 1, owner: null });
    await eventually(async () => (repliesTo(1).length > 0 ? true : undefined), 30_000);
    expect(repliesTo(1).map((call) => call.params.text)).toEqual(['answer to hold: first']);
    expect(asked.get('hold: first')).toBe(1);
  });

  it("runs a killed instance's in-flight inbound message once on a live instance, without a restart", async () => {
    await post(a, 2, 'hold: second');
    await eventually(async () => (asked.get('hold: second') === 1 ? true : undefined), 30_000);
    await harness!.kill(a);
    // B takes the message over once A's lease ran out, and answers it.
    await eventually(async () => (repliesTo(2).length > 0 ? true : undefined), 60_000);
    await eventually(async () => ((await journal(2))?.stage === 'done' ? true : undefined), 30_000);
    expect(await journal(2)).toEqual({ stage: 'done', attempts: 2, owner: null });
    expect(repliesTo(2).map((call) => call.params.text)).toEqual(['answer to hold: second']);
    expect(asked.get('hold: second')).toBe(2);
  });
});

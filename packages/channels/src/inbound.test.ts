import { createHmac } from 'node:crypto';
import type { AgentTurnRequest } from '@agentd/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../test/fake-slack.js';
import { type FakeWhatsApp, startFakeWhatsApp } from '../test/fake-whatsapp.js';
import {
  deliverCommon,
  recordingRunner,
  serveChannels,
  signedSlackPost,
  useTestBed,
} from '../test/fixtures.js';
import type { InboundReaction } from './adapter.js';
import { channelsSectionSchema } from './config.js';
import { createWhatsAppAdapter } from './adapters/whatsapp.js';
import { isChannelsError } from './errors.js';
import { type ChannelsService, createChannelsService } from './service.js';

const WA_TOKEN = 'EAAG-fake-whatsapp-access-token-0123';
const APP_SECRET = 'fake-app-secret-4567';
const SLACK_TOKEN = 'xoxb-inbound-slack-token-0000';
const SIGNING = 'fake-slack-signing-secret-89';
const bed = useTestBed('channels-inbound');
let wa: FakeWhatsApp;
let slack: FakeSlack;
let service: ChannelsService;
let base: string;
let closeHttp: () => Promise<void>;
const turns: AgentTurnRequest[] = [];
const reactions: InboundReaction[] = [];

beforeEach(async () => {
  wa = await startFakeWhatsApp({ token: WA_TOKEN, phoneNumberId: '1555' });
  slack = await startFakeSlack({ token: SLACK_TOKEN });
  turns.length = 0;
  reactions.length = 0;
  service = createChannelsService({
    db: bed.db,
    section: channelsSectionSchema.parse({
      whatsapp: {
        enabled: true,
        accessToken: WA_TOKEN,
        phoneNumberId: '1555',
        appSecret: APP_SECRET,
        verifyToken: 'verify-me',
        apiBaseUrl: wa.url,
        agentId: 'helper',
        allowFrom: ['4915100000001'],
      },
      slack: slackSection(),
      delivery: { baseDelayMs: 20, maxAttempts: 3 },
    }),
    runner: recordingRunner(turns),
    onReaction: (reaction) => reactions.push(reaction),
    pollMs: 50,
    settleTimeoutMs: 8000,
  });
  await service.start();
  const server = await serveChannels(() => service);
  base = server.url;
  closeHttp = server.close;
});
afterEach(async () => {
  await closeHttp();
  await service.close();
  await wa.close();
  await slack.close();
});

/** The Slack section every test here runs with: Events API callbacks, admitting `U1`. */
const slackSection = () => ({
  enabled: true,
  botToken: SLACK_TOKEN,
  signingSecret: SIGNING,
  apiBaseUrl: slack.url,
  agentId: 'helper',
  allowFrom: ['U1'],
});

const waEvent = (from: string, id: string, body: string) =>
  JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [{ field: 'messages', value: { messages: [{ from, id, type: 'text', text: { body } }] } }],
      },
    ],
  });
const waPost = (body: string, secret = APP_SECRET) =>
  fetch(`${base}/channels/whatsapp/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    },
    body,
  });
const slackPost = (payload: unknown, options: { secret?: string; ts?: number } = {}) =>
  signedSlackPost(base, payload, options.secret ?? SIGNING, options.ts);

describe('whatsapp', () => {
  it('sends, replies, reacts, attaches and runs actions over the Cloud API; refuses edit before writing', async () => {
    const { sent, file } = await deliverCommon(service, 'whatsapp', '4915100000002', {
      text: 'hi',
      reply: 're',
      emoji: '👍',
      file: { content: '%PDF', mimeType: 'application/pdf', filename: 'r.pdf', caption: 'report' },
    });
    expect(sent).toMatchObject({ status: 'sent', messageId: expect.stringMatching(/^wamid\./) });
    expect(file.status).toBe('sent');
    expect(wa.messages()).toMatchObject([
      { messaging_product: 'whatsapp', to: '4915100000002', type: 'text', text: { body: 'hi' } },
      { context: { message_id: sent.messageId } },
      { type: 'reaction', reaction: { message_id: sent.messageId, emoji: '👍' } },
      {
        type: 'document',
        document: { id: expect.stringMatching(/^media-/), caption: 'report', filename: 'r.pdf' },
      },
    ]);
    expect(wa.calls.find((call) => call.path === '/media')?.body).toMatchObject({
      messaging_product: 'whatsapp',
      file: { filename: 'r.pdf', size: 4 },
    });
    const edit = await service
      .deliver('whatsapp', { op: 'edit', channelId: '4915100000002', messageId: 'x', text: 'y' })
      .catch((error: unknown) => error);
    expect(isChannelsError(edit, 'UNSUPPORTED')).toBe(true);
    expect(await service.action('whatsapp', { action: 'markRead', message_id: 'wamid.in1' })).toEqual({
      ok: true,
    });
    expect(
      await service.action('whatsapp', {
        action: 'template',
        to: '4915100000002',
        name: 'hello_world',
        language: 'en_US',
      }),
    ).toMatchObject({ messageId: expect.any(String) });
    expect(await service.queueStatus('whatsapp')).toMatchObject({ sent: 4, deadLetter: 0 });
  });

  it('retries a throughput limit (130429) and dead-letters a 400', async () => {
    wa.fail(429, 130429, { retryAfter: 1 });
    expect(
      (await service.deliver('whatsapp', { op: 'send', channelId: '4915100000003', text: 'a' })).status,
    ).toBe('sent');
    wa.fail(400, 131026);
    const refused = await service.deliver('whatsapp', { op: 'send', channelId: '4915100000003', text: 'b' });
    expect(refused).toMatchObject({ status: 'deadLetter', error: 'whatsapp: fake error 131026' });
  });

  it('reads a Retry-After in seconds or as an HTTP date into the wait the queue honours', async () => {
    const at = Date.parse('2026-03-01T12:00:00Z');
    const adapter = createWhatsAppAdapter({
      accessToken: WA_TOKEN,
      phoneNumberId: '1555',
      apiBaseUrl: wa.url,
      now: () => at,
    });
    const refusal = async () => {
      const error = await adapter
        .deliver({ op: 'send', channelId: '4915100000003', text: 'x' }, { deliveryId: 'd', attempt: 1 })
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      return isChannelsError(error) ? error.data : error;
    };
    wa.fail(429, 130429, { retryAfter: 'Sun, 01 Mar 2026 12:01:30 GMT' });
    expect(await refusal()).toMatchObject({ retryable: true, retryAfterMs: 90_000 });
    wa.fail(429, 130429, { retryAfter: '2.5' });
    expect(await refusal()).toMatchObject({ retryable: true, retryAfterMs: 2500 });
    wa.fail(429, 130429, { retryAfter: 'soon' });
    const unreadable = await refusal();
    expect(unreadable).toMatchObject({ retryable: true });
    expect(unreadable).not.toHaveProperty('retryAfterMs');
  });

  it('answers the hub.challenge handshake and turns a signed message from an allowed sender into a reply', async () => {
    const ok = await fetch(
      `${base}/channels/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=12345`,
    );
    expect([ok.status, await ok.text()]).toEqual([200, '12345']);
    const wrong = await fetch(
      `${base}/channels/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`,
    );
    expect(wrong.status).toBe(403);

    expect((await waPost(waEvent('4915100000001', 'wamid.in1', 'hello'), 'wrong-secret')).status).toBe(401);
    expect((await waPost(waEvent('4915199999999', 'wamid.in2', 'stranger'))).status).toBe(200);
    expect((await waPost(waEvent('4915100000001', 'wamid.in3', 'hello'))).status).toBe(200);
    await expect.poll(() => wa.messages().length, { timeout: 8000 }).toBe(1);
    expect(turns.map((turn) => turn.message)).toEqual(['hello']);
    expect(wa.messages()[0]).toMatchObject({
      to: '4915100000001',
      text: { body: 'answer to hello' },
      context: { message_id: 'wamid.in3' },
    });
    expect(service.refusedCount('whatsapp')).toBe(1);
  });

  it('reads a reaction message as a reaction of an admitted sender, never as an agent turn', async () => {
    const reactionEvent = (from: string, emoji: string) =>
      JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: '1',
            changes: [
              {
                field: 'messages',
                value: {
                  messages: [
                    {
                      from,
                      id: `wamid.r${emoji.length}`,
                      type: 'reaction',
                      reaction: { message_id: 'wamid.out7', emoji },
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
    expect((await waPost(reactionEvent('4915199999999', '👍'))).status).toBe(200);
    expect((await waPost(reactionEvent('4915100000001', ''))).status).toBe(200); // taken back
    expect((await waPost(reactionEvent('4915100000001', '👎'))).status).toBe(200);
    expect(reactions).toEqual([
      {
        channelType: 'whatsapp',
        channelId: '4915100000001',
        userId: '4915100000001',
        messageId: 'wamid.out7',
        emoji: '👎',
      },
    ]);
    expect(turns).toEqual([]);
  });
});

describe('slack events API', () => {
  it('answers url_verification and routes a signed message into a threaded reply; refuses bad signatures', async () => {
    const verify = await slackPost({ type: 'url_verification', challenge: 'abc' });
    expect(await verify.json()).toEqual({ challenge: 'abc' });
    expect((await slackPost({ type: 'url_verification', challenge: 'abc' }, { secret: 'nope' })).status).toBe(
      401,
    );
    expect(
      (await slackPost({ type: 'url_verification' }, { ts: Math.floor(Date.now() / 1000) - 600 })).status,
    ).toBe(401);

    const event = { type: 'message', channel: 'C7', user: 'U1', text: 'status?', ts: '1700000000.000200' };
    expect((await slackPost({ type: 'event_callback', event })).status).toBe(200);
    // Slack retries a callback it thinks was lost: one turn, one answer.
    expect((await slackPost({ type: 'event_callback', event })).status).toBe(200);
    await expect.poll(() => slack.posted('C7').length, { timeout: 8000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(slack.posted('C7')).toMatchObject([{ text: 'answer to status?', thread_ts: '1700000000.000200' }]);
    expect(turns[0]).toMatchObject({ agentId: 'helper', sessionKey: 'default:slack-C7:U1' });
  });
});

describe('slack reactions', () => {
  it('hands reaction_added on a message to onReaction for admitted users only', async () => {
    const reactions: unknown[] = [];
    await service.close();
    service = createChannelsService({
      db: bed.db,
      section: channelsSectionSchema.parse({ slack: slackSection() }),
      onReaction: (reaction) => reactions.push(reaction),
      pollMs: 50,
    });
    await service.start();
    const reacted = (user: string, reaction: string) => ({
      type: 'event_callback',
      event: { type: 'reaction_added', user, reaction, item: { type: 'message', channel: 'C7', ts: '1.2' } },
    });
    expect((await slackPost(reacted('U1', '+1'))).status).toBe(200);
    expect((await slackPost(reacted('U9', '-1'))).status).toBe(200);
    expect((await slackPost(reacted('U1', '-1'), { secret: 'nope' })).status).toBe(401);
    expect(reactions).toEqual([
      { channelType: 'slack', channelId: 'C7', userId: 'U1', messageId: '1.2', emoji: '+1' },
    ]);
  });
});

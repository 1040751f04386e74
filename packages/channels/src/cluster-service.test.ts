import type { AgentTurnRequest } from '@agentd/contracts';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances } from '@agentd/storage/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { groupMessage, startFakeTelegram } from '../test/fake-telegram.js';
import {
  openChannelsInstance,
  recordingRunner,
  serveChannels,
  telegramWebhookSection,
} from '../test/fixtures.js';
import { channelsSectionSchema } from './config.js';
import { type ChannelsService, type ChannelsServiceOptions, createChannelsService } from './service.js';

const TOKEN = '123456:cluster-service-telegram-token';
const SECRET = 'cluster-webhook-secret';
const instances = testInstances();
const track = instances.track;
afterEach(() => instances.closeAll());

/** One instance's channels service: its own pool and coordinator on the shared database. */
async function instance(
  url: string,
  id: string,
  section: Record<string, unknown>,
  turns: AgentTurnRequest[],
  inboundPlacement?: Placement,
) {
  const { db, coordinator, track } = await openChannelsInstance(instances, url, id);
  const service: ChannelsService = track(
    createChannelsService({
      db,
      section: channelsSectionSchema.parse(section),
      runner: recordingRunner(turns),
      coordinator,
      connectorRenewMs: 100,
      settleTimeoutMs: 8000,
      ...(inboundPlacement ? { inboundPlacement } : {}),
    }),
  );
  await service.start();
  return { db, coordinator, service };
}

type Placement = ChannelsServiceOptions['inboundPlacement'];

/**
 * Two instances (A, B) with the Telegram channel in webhook mode on one fresh database, each
 * served on its own port, with their turns recorded apart; `post` sends an update as Telegram.
 */
async function webhookPair(database: string, placements: [Placement?, Placement?] = []) {
  const url = await freshPgDatabaseUrl(database);
  const telegram = track(await startFakeTelegram({ token: TOKEN }));
  const turns: [AgentTurnRequest[], AgentTurnRequest[]] = [[], []];
  const services: ChannelsService[] = [];
  const servers = [
    track(await serveChannels(() => services[0])).url,
    track(await serveChannels(() => services[1])).url,
  ] as const;
  const start = async (index: 0 | 1, id: string) => {
    const section = {
      telegram: telegramWebhookSection(TOKEN, telegram.url, servers[index], { webhookSecret: SECRET }),
    };
    services.push((await instance(url, id, section, turns[index], placements[index])).service);
  };
  await start(0, 'a');
  await start(1, 'b');
  await expect.poll(() => telegram.webhook()?.url, { timeout: 5000 }).toBeDefined();
  const post = (base: string, update: Record<string, unknown>) =>
    fetch(`${base}/channels/telegram/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
      body: JSON.stringify(update),
    }).then(async (response) => {
      await response.arrayBuffer();
      return response.status;
    });
  return { telegram, servers, turns, post };
}

describe.skipIf(!pgSuitesEnabled())('channels service on two instances of one PostgreSQL', () => {
  it('delivers a webchat answer produced on one instance to the socket connected to the other', async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_webchat');
    const a = await instance(url, 'a', {}, []);
    const b = await instance(url, 'b', {}, []);
    const received: Array<{ clientId: string; params: { text?: string; deliveryId?: string } }> = [];
    // The client's only socket is on B; A has none.
    a.service.attachWebchat(() => 0);
    b.service.attachWebchat((clientId, _method, params) => {
      if (clientId !== 'client-1') return 0;
      received.push({ clientId, params: params as { text?: string } });
      return 1;
    });
    // A holds both clients' lanes (its own lane tasks take the same singleton again), so A sends.
    for (const client of ['client-1', 'client-2'])
      expect(await a.coordinator.singleton(`channels:lane:webchat:${client}`).acquire()).toBeDefined();
    const answer = await a.service.deliver('webchat', { op: 'send', channelId: 'client-1', text: 'from a' });
    expect(answer.status).toBe('sent');
    expect(received).toEqual([
      {
        clientId: 'client-1',
        params: expect.objectContaining({ text: 'from a', deliveryId: answer.deliveryId }),
      },
    ]);
    // A client connected nowhere is still a permanent failure.
    const nowhere = await a.service.deliver('webchat', { op: 'send', channelId: 'client-2', text: 'lost' });
    expect(nowhere.status).toBe('deadLetter');
  });

  it('turns a Telegram webhook update posted to both instances into one turn and one answer', async () => {
    const { telegram, servers, turns, post } = await webhookPair('agentd_channels_webhook');
    // Telegram redelivers an update it believes lost; here the copies land on both instances at once.
    const update = { update_id: 7, ...groupMessage(7, -42, 100, 'once') };
    expect(
      await Promise.all([post(servers[0], update), post(servers[1], update), post(servers[1], update)]),
    ).toEqual([200, 200, 200]);
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 8000 }).toBe(1);
    expect([...turns[0], ...turns[1]].map((turn) => turn.message)).toEqual(['once']);
  });

  it('runs an inbound message for an agent homed on another instance there, not where it arrived', async () => {
    // The section's agent (`helper`) is homed on B: A may not run it and never claims its messages.
    const { telegram, servers, turns, post } = await webhookPair('agentd_channels_homed', [
      { runsHere: async () => false, claimWhere: { sql: 'agent_id <> ?', args: ['helper'] } },
      { runsHere: async () => true },
    ]);
    expect(await post(servers[0], { update_id: 8, ...groupMessage(8, -42, 100, 'to the home') })).toBe(200);
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 8000 }).toBe(1);
    expect(turns[1].map((turn) => turn.message)).toEqual(['to the home']);
    expect(turns[0]).toEqual([]);
  });
});

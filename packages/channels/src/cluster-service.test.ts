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
  inboundPlacement?: ChannelsServiceOptions['inboundPlacement'],
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
    const url = await freshPgDatabaseUrl('agentd_channels_webhook');
    const telegram = track(await startFakeTelegram({ token: TOKEN }));
    const turns: AgentTurnRequest[] = [];
    const services: ChannelsService[] = [];
    const servers = [
      track(await serveChannels(() => services[0])),
      track(await serveChannels(() => services[1])),
    ];
    const section = (base: string) => ({
      telegram: telegramWebhookSection(TOKEN, telegram.url, base, { webhookSecret: SECRET }),
    });
    services.push((await instance(url, 'a', section(servers[0]!.url), turns)).service);
    services.push((await instance(url, 'b', section(servers[1]!.url), turns)).service);
    await expect.poll(() => telegram.webhook()?.url, { timeout: 5000 }).toBeDefined();
    const update = JSON.stringify({ update_id: 7, ...groupMessage(7, -42, 100, 'once') });
    // Telegram redelivers an update it believes lost; here the copies land on both instances at once.
    const post = (base: string) =>
      fetch(`${base}/channels/telegram/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
        body: update,
      }).then((response) => response.status);
    expect(await Promise.all([post(servers[0]!.url), post(servers[1]!.url), post(servers[1]!.url)])).toEqual([
      200, 200, 200,
    ]);
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 8000 }).toBe(1);
    expect(turns.map((turn) => turn.message)).toEqual(['once']);
  });

  it('runs an inbound message for an agent homed on another instance there, not where it arrived', async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_homed');
    const telegram = track(await startFakeTelegram({ token: TOKEN }));
    const [away, home]: AgentTurnRequest[][] = [[], []];
    const services: ChannelsService[] = [];
    const servers = [
      track(await serveChannels(() => services[0])),
      track(await serveChannels(() => services[1])),
    ];
    const section = (base: string) => ({
      telegram: telegramWebhookSection(TOKEN, telegram.url, base, { webhookSecret: SECRET }),
    });
    // The section's agent (`helper`) is homed on B: A may not run it and never claims its messages.
    services.push(
      (
        await instance(url, 'a', section(servers[0]!.url), away!, {
          runsHere: async () => false,
          claimWhere: { sql: 'agent_id <> ?', args: ['helper'] },
        })
      ).service,
    );
    services.push(
      (await instance(url, 'b', section(servers[1]!.url), home!, { runsHere: async () => true })).service,
    );
    await expect.poll(() => telegram.webhook()?.url, { timeout: 5000 }).toBeDefined();
    const response = await fetch(`${servers[0]!.url}/channels/telegram/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
      body: JSON.stringify({ update_id: 8, ...groupMessage(8, -42, 100, 'to the home') }),
    });
    expect(response.status).toBe(200);
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 8000 }).toBe(1);
    expect(home!.map((turn) => turn.message)).toEqual(['to the home']);
    expect(away).toEqual([]);
  });
});

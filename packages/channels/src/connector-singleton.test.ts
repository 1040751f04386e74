import type { AgentTurnRequest } from '@agentd/contracts';
import { type Coordinator, openCoordination, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeTelegram, groupMessage, startFakeTelegram } from '../test/fake-telegram.js';
import { openTestDatabase, recordingRunner, useTestBed } from '../test/fixtures.js';
import { createDiscordAdapter } from './adapters/discord.js';
import { channelsSectionSchema } from './config.js';
import { type ChannelsService, createChannelsService } from './service.js';

const TOKEN = '123456:fake-telegram-token-connector-singleton';
const bed = useTestBed('channels-connectors');
let telegram: FakeTelegram;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeEach(async () => {
  telegram = bed.closeAfter(await startFakeTelegram({ token: TOKEN }));
});

/** One instance's channels service on its own database, polling the shared fake bot. */
async function instance(turns: AgentTurnRequest[], coordinator?: Coordinator): Promise<ChannelsService> {
  const own = bed.closeAfter(await openTestDatabase('channels-connector-instance'));
  const service = createChannelsService({
    db: own.db,
    section: channelsSectionSchema.parse({
      telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: telegram.url, allowFrom: ['100'] },
    }),
    runner: recordingRunner(turns),
    coordinator,
    connectorRenewMs: 100,
    pollMs: 50,
    settleTimeoutMs: 5000,
  });
  return service;
}

describe('polling connectors', () => {
  it('without a coordinator, two instances polling one bot end each other with 409 (the fault the singleton prevents)', async () => {
    const turns: AgentTurnRequest[] = [];
    const a = bed.closeAfter(await instance(turns));
    const b = bed.closeAfter(await instance(turns));
    await a.start();
    await b.start();
    await expect.poll(() => telegram.conflicts(), { timeout: 10_000 }).toBeGreaterThan(0);
  });
});

describe.skipIf(!pgSuitesEnabled())('polling connectors in cluster mode', () => {
  /** An instance's coordinator on its own pool (`leaseMs` 5 s, renewed by the gate every 100 ms). */
  async function coordinator(url: string, id: string) {
    const db = bed.closeAfter(await openDatabase({ url, poolMax: 2 }));
    const opened = bed.closeAfter(await openCoordination(db, { instanceId: id, leaseMs: 5000 }));
    await opened.start();
    return { db, coordinator: opened };
  }

  it('poll on one instance at a time, and move to another when the holder loses its database or stops', async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_connectors');
    const admin = bed.closeAfter(await openDatabase({ url, poolMax: 1 }));
    const owner = async () =>
      (
        await admin.get<{ owner: string }>(
          "SELECT owner FROM cluster_singletons WHERE name = 'channels:telegram'",
        )
      )?.owner;
    const turns = { a: [] as AgentTurnRequest[], b: [] as AgentTurnRequest[], c: [] as AgentTurnRequest[] };
    const messages = (list: AgentTurnRequest[]) => list.map((turn) => turn.message);
    const a = await coordinator(url, 'a');
    const serviceA = bed.closeAfter(await instance(turns.a, a.coordinator));
    const serviceB = await instance(turns.b, (await coordinator(url, 'b')).coordinator);
    await serviceA.start();
    await serviceB.start();
    telegram.pushUpdate(groupMessage(1, -500, 100, 'first'));
    await expect.poll(() => turns.a.length + turns.b.length, { timeout: 10_000 }).toBe(1);
    expect(messages(turns.a)).toEqual(['first']);
    await sleep(1500); // fifteen renewals: the standby never polls beside the holder
    expect(telegram.conflicts()).toBe(0);

    // A loses its database (it cannot renew) and its lease lapses: it stops polling, B takes over.
    await a.db.close();
    await admin.execute("UPDATE cluster_singletons SET lease_until = 0 WHERE name = 'channels:telegram'");
    await expect.poll(owner, { timeout: 10_000 }).toBe('b');
    await sleep(500);
    const conflictsAtHandover = telegram.conflicts();
    telegram.pushUpdate(groupMessage(2, -500, 100, 'second'));
    await expect.poll(() => messages(turns.b), { timeout: 10_000 }).toEqual(['second']);
    await sleep(1000);
    expect(telegram.conflicts()).toBe(conflictsAtHandover);
    expect(messages(turns.a)).toEqual(['first']);

    // A stopping instance gives the singleton up: a newcomer polls long before the 5 s lease ends.
    const serviceC = bed.closeAfter(await instance(turns.c, (await coordinator(url, 'c')).coordinator));
    await serviceC.start();
    expect(await owner()).toBe('b');
    await serviceB.close();
    await expect.poll(owner, { timeout: 2500 }).toBe('c');
    telegram.pushUpdate(groupMessage(3, -500, 100, 'third'));
    await expect.poll(() => messages(turns.c), { timeout: 10_000 }).toEqual(['third']);
  });

  it("splits Discord's global request budget between the live instances, and gives it back when one leaves", async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_rate_share');
    const shares = { a: [] as number[], b: [] as number[] };
    const open = async (id: 'a' | 'b') => {
      const { coordinator: joined } = await coordinator(url, id);
      const own = bed.closeAfter(await openTestDatabase('channels-rate-share'));
      const service = createChannelsService({
        db: own.db,
        section: channelsSectionSchema.parse({
          discord: { enabled: true, botToken: 'rate-share-token', apiBaseUrl: 'http://127.0.0.1:9/api' },
        }),
        factories: {
          discord: () => {
            const real = createDiscordAdapter({
              botToken: 'rate-share-token',
              apiBaseUrl: 'http://127.0.0.1:9/api',
            });
            return {
              ...real,
              shareRateLimit(instances: number) {
                shares[id].push(instances);
                real.shareRateLimit?.(instances);
              },
            };
          },
        },
        coordinator: joined,
        connectorRenewMs: 100,
      });
      await service.start();
      return { service, joined };
    };
    const a = await open('a');
    bed.closeAfter(a.service);
    const b = await open('b');
    await expect.poll(() => [shares.a.at(-1), shares.b.at(-1)], { timeout: 5000 }).toEqual([2, 2]);
    // B leaves the cluster: A has the whole budget again.
    await b.service.close();
    await b.joined.close();
    await expect.poll(() => shares.a.at(-1), { timeout: 5000 }).toBe(1);
  });
});

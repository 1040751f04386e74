import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@agentd/test-support';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../database.js';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances, withDatabase } from '../testing.js';
import { type HostAffinity, openCoordination, openHostAffinity, relayOverBus } from './index.js';

describe('host affinity on libsql (one instance)', () => {
  it('answers here for every handle and home, and relays in process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentd-affinity-'));
    const db = await openDatabase({ url: `file:${join(dir, 'agentd.db')}` });
    const coordinator = await openCoordination(db, { instanceId: 'solo' });
    await coordinator.start();
    try {
      const affinity = await openHostAffinity({ db, coordinator });
      await affinity.record('terminal', 'term_1');
      expect(await affinity.locate('terminal', 'term_1')).toEqual({ where: 'here' });
      expect(await affinity.home('coder')).toEqual({ where: 'here' });
      const seen: unknown[] = [];
      const relay = relayOverBus<{ n: number }>(coordinator, 'ws-notice', (message) => seen.push(message));
      await relay.send({ n: 1 });
      expect(seen).toEqual([{ n: 1 }]);
      relay.close();
      await affinity.close();
    } finally {
      await coordinator.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!pgSuitesEnabled())('host affinity on PostgreSQL', () => {
  let url: string;
  const instances = testInstances();
  async function instance(id: string, leaseMs = 10_000) {
    const { db, coordinator, track } = await instances.open(url, id, {
      coordination: { leaseMs, advertiseUrl: `http://${id}.test:7777` },
    });
    const affinity: HostAffinity = track(await openHostAffinity({ db, coordinator, leaseMs }));
    return { db, coordinator, affinity };
  }

  beforeAll(async () => {
    url = await freshPgDatabaseUrl();
  });
  afterEach(async () => {
    await instances.closeAll().catch(() => undefined);
    await withDatabase(url, async (db) => {
      await db.execute('DELETE FROM cluster_handles');
      await db.execute('DELETE FROM agent_homes');
      await db.execute('DELETE FROM cluster_instances');
    });
  });

  it("locates a handle on the instance that made it, with that instance's URL", async () => {
    const a = await instance('a');
    const b = await instance('b');
    await a.affinity.record('terminal', 'term_1');
    expect(await a.affinity.locate('terminal', 'term_1')).toEqual({ where: 'here' });
    expect(await b.affinity.locate('terminal', 'term_1')).toEqual({
      where: 'elsewhere',
      instanceId: 'a',
      advertiseUrl: 'http://a.test:7777',
    });
    // Kinds are separate name spaces; an unknown handle is nowhere.
    expect(await b.affinity.locate('browser-tab', 'term_1')).toEqual({ where: 'nowhere' });
    await a.affinity.forget('terminal', 'term_1');
    expect(await b.affinity.locate('terminal', 'term_1')).toEqual({ where: 'nowhere' });
  });

  it('answers nowhere for a handle of an instance that is gone', async () => {
    const a = await instance('a');
    const b = await instance('b');
    await a.affinity.record('browser-tab', 'ab12');
    // Its membership ends (a clean leave deletes the row; a crash lets the lease lapse).
    await a.db.execute("UPDATE cluster_instances SET lease_until = 0 WHERE instance_id = 'a'");
    expect(await b.affinity.locate('browser-tab', 'ab12')).toEqual({ where: 'nowhere' });
    expect(await b.db.get('SELECT * FROM cluster_handles')).toBeUndefined();
  });

  it('gives an agent one home: the first to ask takes it, the others are sent there', async () => {
    const a = await instance('a');
    const b = await instance('b');
    const answers = await Promise.all([a.affinity.home('coder'), b.affinity.home('coder')]);
    const here = answers.filter((answer) => answer.where === 'here');
    expect(here).toHaveLength(1);
    const [holder, other] = answers[0]!.where === 'here' ? [a, b] : [b, a];
    expect(holder.affinity.holdsHome('coder')).toBe(true);
    expect(other.affinity.holdsHome('coder')).toBe(false);
    expect(await other.affinity.home('coder')).toEqual({
      where: 'elsewhere',
      instanceId: holder.coordinator.instanceId,
      advertiseUrl: `http://${holder.coordinator.instanceId}.test:7777`,
    });
    // A clean close gives the home up at once.
    await holder.affinity.close();
    expect(await other.affinity.home('coder')).toEqual({ where: 'here' });
  });

  it('keeps a home while its instance renews it, and moves it once the lease lapses', async () => {
    const a = await instance('a', 600);
    const b = await instance('b', 600);
    expect(await a.affinity.home('coder')).toEqual({ where: 'here' });
    // Past several lease times: a's renewals keep it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await b.affinity.home('coder')).where).toBe('elsewhere');
    // a dies without a word: its pool closes, so it renews nothing.
    await a.db.close();
    await eventually(
      async () => ((await b.affinity.home('coder')).where === 'here' ? true : undefined),
      5000,
    );
    const row = await b.db.get<{ owner: string; fence: number }>(
      "SELECT owner, fence FROM agent_homes WHERE agent_id = 'coder'",
    );
    expect(row?.owner).toBe('b');
    expect(Number(row?.fence)).toBe(2);
  });

  it('relays a message to the listeners of every other instance once', async () => {
    const a = await instance('a');
    const b = await instance('b');
    const seenA: unknown[] = [];
    const seenB: unknown[] = [];
    const relayA = relayOverBus<{ n: number }>(a.coordinator, 'ws-notice', (message) => seenA.push(message));
    const relayB = relayOverBus<{ n: number }>(b.coordinator, 'ws-notice', (message) => seenB.push(message));
    await relayA.send({ n: 1 });
    await eventually(() => (seenB.length === 1 ? true : undefined), 5000);
    expect(seenA).toEqual([{ n: 1 }]);
    expect(seenB).toEqual([{ n: 1 }]);
    relayA.close();
    relayB.close();
  });
});

import { testDialects } from '@agentd/storage/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../test/fixtures.js';
import { createGroupCommit } from './group-commit.js';
import { type ChannelsDatabase, type DeliveryEntry, deliveryIdAt, toEntry } from './queue-store.js';

let store: TestDatabase;

function entry(at: number, channelId: string): DeliveryEntry {
  const deliveryId = deliveryIdAt(at);
  return {
    deliveryId,
    idempotencyKey: deliveryId,
    channelType: 'telegram',
    operation: { op: 'send', channelId, text: `to ${channelId}` },
    stage: 'sending',
    attempts: 1,
    nextAttemptAt: at,
    createdAt: at,
    updatedAt: at,
    rootRunId: undefined,
    messageId: undefined,
    lastError: undefined,
  };
}

/** The database as the committer sees it, keeping every statement it was given. */
function recorded(inner: ChannelsDatabase) {
  const statements: string[] = [];
  const db: ChannelsDatabase = {
    execute: (sql, args) => {
      statements.push(sql);
      return inner.execute(sql, args);
    },
    batch: (batch) => {
      statements.push(...batch.map((statement) => statement.sql));
      return inner.batch(batch);
    },
  };
  return { db, statements };
}

describe.each(testDialects())('the group commit on %s', (dialect) => {
  beforeEach(async () => {
    store = await openTestDatabase('channels-commit', dialect);
  });
  afterEach(async () => {
    await store.close();
  });

  it('records acknowledgements in one statement that reads nothing back when every row was sending', async () => {
    const { db, statements } = recorded(store.db);
    const commits = createGroupCommit(db);
    const entries = [entry(1000, 'a'), entry(1000, 'b'), entry(1000, 'c')];
    expect(await Promise.all(entries.map((one) => commits.insert(one)))).toEqual([true, true, true]);
    statements.length = 0;
    const acks = entries.map((one, n) => commits.sent(one.deliveryId, `m${n}`, 2000 + n));
    expect(await Promise.all(acks)).toEqual([true, true, true]);
    // One UPDATE, no RETURNING, and no read after it.
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^UPDATE/);
    expect(statements[0]).not.toMatch(/RETURNING/);
    const stored = await Promise.all(
      entries.map(async (one) =>
        toEntry(
          (await store.db.execute('SELECT * FROM channel_deliveries WHERE delivery_id = ?', [one.deliveryId]))
            .rows[0] ?? {},
        ),
      ),
    );
    expect(stored.map((one) => [one.stage, one.messageId, one.updatedAt])).toEqual([
      ['sent', 'm0', 2000],
      ['sent', 'm1', 2001],
      ['sent', 'm2', 2002],
    ]);
  });

  it('tells which acknowledgements were not recorded when a row had left sending', async () => {
    const commits = createGroupCommit(store.db);
    const entries = [entry(1000, 'a'), entry(1000, 'b'), entry(1000, 'c'), entry(1000, 'd')];
    await Promise.all(entries.map((one) => commits.insert(one)));
    const [, moved, same] = entries as [DeliveryEntry, DeliveryEntry, DeliveryEntry, DeliveryEntry];
    // Another writer moved one row on, and recorded another exactly as the acknowledgement would.
    await store.db.execute(`UPDATE channel_deliveries SET stage = 'failed' WHERE delivery_id = ?`, [
      moved.deliveryId,
    ]);
    await store.db.execute(
      `UPDATE channel_deliveries SET stage = 'sent', message_id = 'm2', updated_at = 2002 WHERE delivery_id = ?`,
      [same.deliveryId],
    );
    const acks = entries.map((one, n) => commits.sent(one.deliveryId, `m${n}`, 2000 + n));
    expect(await Promise.all(acks)).toEqual([true, false, true, true]);
    const { rows } = await store.db.execute('SELECT stage FROM channel_deliveries WHERE delivery_id = ?', [
      moved.deliveryId,
    ]);
    expect(rows[0]?.stage).toBe('failed');
  });
});

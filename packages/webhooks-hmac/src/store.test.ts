import { openDatabase } from '@agentd/storage';
import { databasePerTest } from '@agentd/test-support';
import { beforeEach, describe, expect, it } from 'vitest';
import { isWebhookError } from './errors.js';
import { openMigrated } from '../test/helpers.js';
import { createWebhookStore } from './store.js';
import { deliverPendingWakes } from './wake.js';

const temp = databasePerTest('webhooks-store-', openMigrated);
let clock = 1_700_000_000_000;
const now = () => clock;

beforeEach(() => {
  clock = 1_700_000_000_000;
});

const agentPlan = {
  action: 'agent' as const,
  message: 'hello',
  sessionKey: 'hook:a',
  agentId: 'ops',
  timeoutMs: 5000,
};

describe('createWebhookStore', () => {
  it('queues an accepted agent webhook and hands it out once, oldest first', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    const first = await store.accept({
      endpoint: 'mapped',
      mappingId: 'a',
      deliveryId: 'd1',
      plan: agentPlan,
    });
    const second = await store.accept({
      endpoint: 'strict',
      mappingId: 'b',
      plan: { ...agentPlan, message: 'two' },
    });
    expect(first).toMatchObject({ duplicate: false });
    expect(second).toMatchObject({ duplicate: false });
    const job = await store.claimNextJob();
    expect(job).toMatchObject({
      mappingId: 'a',
      deliveryId: 'd1',
      attempts: 1,
      agentId: 'ops',
      message: 'hello',
      sessionKey: 'hook:a',
      timeoutMs: 5000,
      deliver: false,
      model: undefined,
    });
    expect((await store.claimNextJob())?.message).toBe('two');
    expect(await store.claimNextJob()).toBeUndefined();
    expect(await store.queueStats()).toEqual({ queued: 0, running: 2, done: 0, failed: 0 });
    await store.close();
  });

  it('answers duplicate for a delivery id seen within 24 hours and queues nothing', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    const deliverSame = () =>
      store.accept({ endpoint: 'mapped', mappingId: 'a', deliveryId: 'same', plan: agentPlan });
    await deliverSame();
    clock += 23 * 60 * 60 * 1000;
    expect(await deliverSame()).toEqual({ duplicate: true });
    expect((await store.queueStats()).queued).toBe(1);
    clock += 2 * 60 * 60 * 1000;
    expect(await deliverSame()).toMatchObject({ duplicate: false });
    expect((await store.queueStats()).queued).toBe(2);
    await store.close();
  });

  it('writes nothing when the transaction fails halfway', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    // A NOT NULL violation in the queue insert must roll back the delivery id claimed just before.
    const broken = { ...agentPlan, sessionKey: null as unknown as string };
    await expect(
      store.accept({ endpoint: 'mapped', mappingId: 'a', deliveryId: 'd9', plan: broken }),
    ).rejects.toThrow();
    expect(await temp.db.query('SELECT * FROM webhook_deliveries')).toEqual([]);
    expect(
      await store.accept({ endpoint: 'mapped', mappingId: 'a', deliveryId: 'd9', plan: agentPlan }),
    ).toMatchObject({
      duplicate: false,
    });
    await store.close();
  });

  it('retries failed jobs at their time and fails them for good without a retry time', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    await store.accept({ endpoint: 'mapped', mappingId: 'a', plan: agentPlan });
    const job = await store.claimNextJob();
    await store.failJob(job!.id, 'Error: boom', clock + 1000);
    expect(await store.claimNextJob()).toBeUndefined();
    expect(await store.dueJobCount()).toBe(0);
    clock += 1000;
    const again = await store.claimNextJob();
    expect(again?.attempts).toBe(2);
    await store.failJob(again!.id, 'Error: boom', undefined);
    expect(await store.queueStats()).toMatchObject({ failed: 1, queued: 0 });
    await store.close();
  });

  it('puts running jobs back after a restart', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    await store.accept({ endpoint: 'mapped', mappingId: 'a', plan: agentPlan });
    await store.claimNextJob();
    await store.close();
    await temp.db.close();
    const db = await openDatabase({ dataDir: temp.dir });
    const reopened = createWebhookStore({ db, now });
    expect(await reopened.recoverRunningJobs()).toBe(1);
    expect((await reopened.claimNextJob())?.attempts).toBe(2);
    await reopened.close();
    await db.close();
  });

  it('records wakes durably and hands them to a wake target once', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    const wake = (mode: 'now' | 'next-heartbeat', text: string, recordWake?: boolean) =>
      store.accept({ endpoint: 'mapped', mappingId: 'w', plan: { action: 'wake', mode, text }, recordWake });
    await wake('now', 'look');
    await wake('next-heartbeat', 'later');
    const skipped = await wake('now', 'live', false);
    expect(skipped).toEqual({ duplicate: false, jobId: undefined, wakeId: undefined });
    expect((await store.pendingWakes()).map((wake) => [wake.mode, wake.text])).toEqual([
      ['now', 'look'],
      ['next-heartbeat', 'later'],
    ]);
    const calls: string[] = [];
    const target = {
      wakeNow: (text?: string) => calls.push(`now:${text}`),
      queueForNextBeat: (text: string) => calls.push(`next:${text}`),
    };
    expect(await deliverPendingWakes(store, target)).toBe(2);
    expect(calls).toEqual(['now:look', 'next:later']);
    expect(await deliverPendingWakes(store, target)).toBe(0);
    await store.close();
  });

  it('counts outcomes per day, endpoint, outcome, reason and mapping', async () => {
    const store = createWebhookStore({ db: temp.db, now, counterFlushMs: 60_000 });
    store.recordOutcome({ endpoint: 'strict', outcome: 'accepted', reason: 'ok', mappingId: 'webhook' });
    store.recordOutcome({ endpoint: 'strict', outcome: 'accepted', reason: 'ok', mappingId: 'webhook' });
    store.recordOutcome({
      endpoint: 'mapped',
      outcome: 'rejected',
      reason: 'signature_mismatch',
      mappingId: undefined,
    });
    await store.flushCounters();
    store.recordOutcome({ endpoint: 'strict', outcome: 'accepted', reason: 'ok', mappingId: 'webhook' });
    expect(await store.counters()).toEqual([
      {
        day: '2023-11-14',
        endpoint: 'mapped',
        outcome: 'rejected',
        reason: 'signature_mismatch',
        mappingId: '',
        count: 1,
      },
      {
        day: '2023-11-14',
        endpoint: 'strict',
        outcome: 'accepted',
        reason: 'ok',
        mappingId: 'webhook',
        count: 3,
      },
    ]);
    expect(await store.counters('2023-11-15')).toEqual([]);
    await store.close();
  });

  it('prunes expired delivery ids and old finished jobs', async () => {
    const store = createWebhookStore({ db: temp.db, now, retentionMs: 1000 });
    await store.accept({ endpoint: 'mapped', mappingId: 'a', deliveryId: 'old', plan: agentPlan });
    const job = await store.claimNextJob();
    await store.completeJob(job!.id, {
      finishReason: 'stop',
      responseChars: 2,
      deliveryStatus: 'not_requested',
    });
    clock += 24 * 60 * 60 * 1000;
    expect(await store.prune()).toEqual({ deliveries: 1, jobs: 1, wakes: 0 });
    await store.close();
  });

  it('refuses use after close', async () => {
    const store = createWebhookStore({ db: temp.db, now });
    await store.close();
    await store.close();
    await expect(store.claimNextJob()).rejects.toSatisfy((error) => isWebhookError(error, 'STORE_CLOSED'));
  });
});

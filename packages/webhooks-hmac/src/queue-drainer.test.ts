import { databasePerTest, turnRunner } from '@agentd/test-support';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AgentTurnRunner, createQueueDrainer } from './queue-drainer.js';
import { openMigrated } from '../test/helpers.js';
import { createWebhookStore, type WebhookStore } from './store.js';

type TurnRequest = Parameters<AgentTurnRunner['runTurn']>[0];

const temp = databasePerTest('webhooks-drainer-', openMigrated);
let store: WebhookStore;

beforeEach(() => {
  store = createWebhookStore({ db: temp.db });
});

afterEach(() => store.close());

function fakeRunner(behaviour: (request: TurnRequest) => Promise<string> = async (r) => `echo ${r.message}`) {
  const requests: TurnRequest[] = [];
  const runner = turnRunner((request) => {
    requests.push(request);
    return behaviour(request);
  }, 'none');
  return { runner, requests };
}

const enqueue = (message: string, extra: Record<string, unknown> = {}) =>
  store.accept({
    endpoint: 'mapped',
    mappingId: 'm',
    plan: { action: 'agent', message, sessionKey: `hook:${message}`, ...extra },
  });

/** The store with its two queue reads counted, to see whether the drainer polls or spins. */
function countingStore(inner: WebhookStore) {
  const reads = { claims: 0, nextDue: 0 };
  const counted: WebhookStore = {
    ...inner,
    claimNextJob: () => {
      reads.claims++;
      return inner.claimNextJob();
    },
    nextAttemptAt: () => {
      reads.nextDue++;
      return inner.nextAttemptAt();
    },
  };
  return { reads, counted };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createQueueDrainer', () => {
  it('runs queued turns in order with origin hook and the mapping fields', async () => {
    await enqueue('one', { agentId: 'ops', model: 'small', timeoutMs: 30_000 });
    await enqueue('two');
    const { runner, requests } = fakeRunner();
    const drainer = createQueueDrainer({ store, runner });
    await drainer.start();
    await drainer.idle();
    expect(requests.map((r) => r.message)).toEqual(['one', 'two']);
    expect(requests[0]).toMatchObject({
      agentId: 'ops',
      model: 'small',
      timeoutMs: 30_000,
      sessionKey: 'hook:one',
      origin: 'hook',
    });
    expect(requests[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(requests[1]).not.toHaveProperty('agentId');
    expect(await store.queueStats()).toEqual({ queued: 0, running: 0, done: 2, failed: 0 });
    await drainer.stop();
  });

  it('picks up work enqueued after start when kicked', async () => {
    const { runner, requests } = fakeRunner();
    const drainer = createQueueDrainer({ store, runner });
    await drainer.start();
    await enqueue('late');
    drainer.kick();
    await drainer.idle();
    expect(requests.map((r) => r.message)).toEqual(['late']);
    await drainer.stop();
  });

  it('does no work while the queue is empty: no read and no timer until kicked', async () => {
    const { reads, counted } = countingStore(store);
    const { runner, requests } = fakeRunner();
    // The drainer's timers are fake from its creation, so a poll would show as a timer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const drainer = createQueueDrainer({ store: counted, runner });
    let afterStart: typeof reads;
    try {
      await drainer.start();
      await drainer.idle();
      await vi.advanceTimersByTimeAsync(0);
      afterStart = { ...reads };
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(3_600_000);
    } finally {
      vi.useRealTimers();
    }
    expect(reads).toEqual(afterStart);
    await enqueue('now');
    drainer.kick();
    await drainer.idle();
    expect(requests.map((r) => r.message)).toEqual(['now']);
    expect(reads.claims).toBeGreaterThan(afterStart.claims);
    await drainer.stop();
  });

  it('runs a job queued for later when it falls due, without a kick', async () => {
    await enqueue('later');
    const job = await store.claimNextJob();
    await store.failJob(job!.id, 'Error: first attempt', Date.now() + 150);
    expect(await store.nextAttemptAt()).toBeGreaterThan(Date.now());
    const { runner, requests } = fakeRunner();
    const drainer = createQueueDrainer({ store, runner });
    await drainer.start();
    expect(requests).toHaveLength(0);
    for (let i = 0; i < 100 && (await store.queueStats()).done === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(requests.map((r) => r.message)).toEqual(['later']);
    expect(await store.nextAttemptAt()).toBeUndefined();
    await drainer.stop();
  });

  it('waits for the running turn, without reading in a loop, while a due job has no free slot', async () => {
    await enqueue('first');
    await enqueue('second');
    const { reads, counted } = countingStore(store);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { runner, requests } = fakeRunner(async (r) => {
      if (r.message === 'first') await held;
      return `echo ${r.message}`;
    });
    const drainer = createQueueDrainer({ store: counted, runner, concurrency: 1 });
    await drainer.start();
    for (let i = 0; i < 100 && requests.length === 0; i++) await pause(5);
    await pause(20);
    const whileHeld = { ...reads };
    await pause(200);
    expect(reads.nextDue - whileHeld.nextDue).toBeLessThanOrEqual(1);
    expect(reads.claims - whileHeld.claims).toBeLessThanOrEqual(1);
    release();
    await drainer.idle();
    expect(requests.map((r) => r.message)).toEqual(['first', 'second']);
    await drainer.stop();
  });

  it("sleeps through a retry beyond setTimeout's range without waking in a loop", async () => {
    await enqueue('far');
    const job = await store.claimNextJob();
    await store.failJob(job!.id, 'Error: first attempt', Date.now() + 2 ** 31 + 60_000);
    const { reads, counted } = countingStore(store);
    const { runner, requests } = fakeRunner();
    const drainer = createQueueDrainer({ store: counted, runner });
    await drainer.start();
    await pause(150);
    expect(reads.nextDue).toBeLessThanOrEqual(2);
    expect(requests).toHaveLength(0);
    expect(await store.queueStats()).toMatchObject({ queued: 1 });
    await drainer.stop();
  });

  it('retries a failing turn and marks it failed after maxAttempts', async () => {
    await enqueue('flaky');
    let calls = 0;
    const { runner } = fakeRunner(async () => {
      calls++;
      throw new Error('provider down');
    });
    const finished: unknown[] = [];
    const events = {
      emit: (event: string, payload: Record<string, unknown>) => finished.push({ event, ...payload }),
    };
    const drainer = createQueueDrainer({ store, runner, maxAttempts: 3, retryDelayMs: 0, events });
    await drainer.start();
    for (let i = 0; i < 50 && (await store.queueStats()).failed === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(calls).toBe(3);
    expect(await store.queueStats()).toMatchObject({ failed: 1, queued: 0, running: 0 });
    const row = await temp.db.get<{ last_error: string }>('SELECT last_error FROM webhook_agent_queue');
    expect(row?.last_error).toBe('Error: provider down');
    expect(finished.map((entry) => (entry as { outcome: string }).outcome)).toEqual([
      'retry',
      'retry',
      'failed',
    ]);
    await drainer.stop();
  });

  it('caps and jitters the retry delay of a job that failed many times', async () => {
    await enqueue('often');
    await temp.db.execute('UPDATE webhook_agent_queue SET attempts = 14');
    const retries: number[] = [];
    const recording: WebhookStore = {
      ...store,
      failJob: (id, reason, retryAt) => {
        if (retryAt !== undefined) retries.push(retryAt);
        return store.failJob(id, reason, retryAt);
      },
    };
    const { runner } = fakeRunner(async () => {
      throw new Error('provider down');
    });
    // The drainer's clock an hour ahead: the retry it schedules is not due in the store's time.
    const at = Date.now() + 3_600_000;
    const options = { store: recording, runner, maxAttempts: 20, retryDelayMs: 1000, now: () => at };
    const drainer = createQueueDrainer({ ...options, maxRetryDelayMs: 8000, random: () => 0 });
    await drainer.start();
    for (let i = 0; i < 100 && retries.length === 0; i++) await pause(10);
    await drainer.stop();
    // Uncapped, the 15th attempt would wait 1000 × 2^14 ms (four and a half hours).
    expect(retries[0]).toBe(at + 4000);
  });

  it('delivers the answer when asked and keeps it when no deliverer exists', async () => {
    await enqueue('deliver-me', { deliver: true, channel: 'telegram', to: '42' });
    const deliveries: unknown[] = [];
    const { runner } = fakeRunner();
    const finished: Array<Record<string, unknown>> = [];
    const drainer = createQueueDrainer({
      store,
      runner,
      deliver: async (d) => void deliveries.push(d),
      events: { emit: (event, payload) => finished.push({ event, ...payload }) },
    });
    await drainer.start();
    await drainer.idle();
    await drainer.stop();
    expect(finished).toEqual([{ event: 'webhook:job_finished', outcome: 'completed', mapping: 'm' }]);
    expect(deliveries).toEqual([
      {
        idempotencyKey: expect.stringMatching(/^webhook-queue:/),
        channel: 'telegram',
        to: '42',
        text: 'echo deliver-me',
        sessionKey: 'hook:deliver-me',
        agentId: undefined,
        mappingId: 'm',
      },
    ]);

    await enqueue('nowhere', { deliver: true, channel: 'slack' });
    const second = createQueueDrainer({ store, runner });
    await second.start();
    await second.idle();
    await second.stop();
    const rows = await temp.db.query<{ delivery_status: string; undelivered_response: string | null }>(
      'SELECT delivery_status, undelivered_response FROM webhook_agent_queue ORDER BY id',
    );
    expect(rows).toEqual([
      { delivery_status: 'delivered', undelivered_response: null },
      { delivery_status: 'no_target', undelivered_response: 'echo nowhere' },
    ]);
  });

  it('aborts a running turn on stop and runs it again on the next start', async () => {
    await enqueue('long');
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow = fakeRunner(
      (request) =>
        new Promise<string>((_resolve, reject) => {
          started();
          request.signal?.addEventListener('abort', () => reject(request.signal?.reason));
        }),
    );
    const first = createQueueDrainer({ store, runner: slow.runner });
    await first.start();
    await running;
    await first.stop();
    expect(await store.queueStats()).toMatchObject({ queued: 1, running: 0, failed: 0 });

    const quick = fakeRunner();
    const second = createQueueDrainer({ store, runner: quick.runner });
    await second.start();
    await second.idle();
    await second.stop();
    expect(quick.requests.map((r) => r.message)).toEqual(['long']);
    const row = await temp.db.get<{ attempts: number; status: string }>(
      'SELECT attempts, status FROM webhook_agent_queue',
    );
    expect(row).toEqual({ attempts: 1, status: 'done' });
  });

  it('runs up to concurrency turns at once', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await enqueue(name);
    let active = 0;
    let peak = 0;
    const { runner } = fakeRunner(async (request) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 30));
      active--;
      return request.message;
    });
    const drainer = createQueueDrainer({ store, runner, concurrency: 2 });
    await drainer.start();
    await drainer.idle();
    await drainer.stop();
    expect(peak).toBe(2);
    expect((await store.queueStats()).done).toBe(4);
  });

  it('refuses a runner without runTurn', () => {
    expect(() => createQueueDrainer({ store, runner: {} as AgentTurnRunner })).toThrow(/runner/);
    expect(() => createQueueDrainer({ store, runner: fakeRunner().runner, concurrency: 0 })).toThrow(
      /concurrency/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { createLifecycle } from './lifecycle.js';

const quiet = { error: () => undefined };

describe('createLifecycle', () => {
  it('stops started services in reverse order, each once', async () => {
    const events: string[] = [];
    const lifecycle = createLifecycle({ logger: quiet });
    const db = await lifecycle.start(
      'db',
      () => 'db-handle',
      (handle) => void events.push(`stop ${handle}`),
    );
    await lifecycle.start(
      'cache',
      async () => 'cache',
      () => void events.push('stop cache'),
    );
    lifecycle.add('timer', () => void events.push('stop timer'));
    expect(db).toBe('db-handle');
    expect(lifecycle.names).toEqual(['db', 'cache', 'timer']);
    await Promise.all([lifecycle.stop(), lifecycle.stop()]);
    expect(events).toEqual(['stop timer', 'stop cache', 'stop db-handle']);
    await lifecycle.stop();
    expect(events).toHaveLength(3);
  });

  it('does not stop a service whose start threw, and stops the ones before it', async () => {
    const events: string[] = [];
    const lifecycle = createLifecycle({ logger: quiet });
    await lifecycle.start(
      'db',
      () => 1,
      () => void events.push('stop db'),
    );
    await expect(
      lifecycle.start(
        'server',
        () => {
          throw new Error('EADDRINUSE');
        },
        () => void events.push('stop server'),
      ),
    ).rejects.toThrow('EADDRINUSE');
    await lifecycle.stop();
    expect(events).toEqual(['stop db']);
  });

  it('goes on past a failing stop, logs it and rejects with it at the end', async () => {
    const events: string[] = [];
    const logged: unknown[] = [];
    const lifecycle = createLifecycle({ logger: { error: (fields) => void logged.push(fields.service) } });
    lifecycle.add('first', () => void events.push('stop first'));
    lifecycle.add('broken', () => Promise.reject(new Error('disk gone')));
    lifecycle.add('last', () => void events.push('stop last'));
    await expect(lifecycle.stop()).rejects.toThrow('disk gone');
    expect(events).toEqual(['stop last', 'stop first']);
    expect(logged).toEqual(['broken']);
  });

  it('starts a service and closes it on stop, also when its start failed part way', async () => {
    const events: string[] = [];
    const fake = (name: string, fails = false) => ({
      start: async () => {
        events.push(`start ${name}`);
        if (fails) throw new Error(`${name} failed`);
      },
      close: async () => void events.push(`close ${name}`),
    });
    const lifecycle = createLifecycle({ logger: quiet });
    const cron = await lifecycle.service('cron', () => fake('cron'));
    expect(typeof cron.close).toBe('function');
    await expect(lifecycle.service('graph', () => fake('graph', true))).rejects.toThrow('graph failed');
    await lifecycle.stop();
    expect(events).toEqual(['start cron', 'start graph', 'close graph', 'close cron']);
  });
});

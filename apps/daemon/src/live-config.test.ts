import { describe, expect, it } from 'vitest';
import type { DaemonConfig } from './config-schema.js';
import { createLiveConfig } from './live-config.js';

const logged: string[] = [];
const logger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (_fields: unknown, message?: string) => {
    logged.push(message ?? '');
  },
  fatal: () => undefined,
  child: () => logger,
} as never;

const config = (graph: number) => ({ graph: { maxNodes: graph } }) as unknown as DaemonConfig;

describe('createLiveConfig', () => {
  it('hands only changed sections to their appliers, once per change, with the previous config', async () => {
    const live = createLiveConfig({ initial: config(1), logger });
    const calls: Array<[string, number, number]> = [];
    live.on(['graph'], (next, previous) => {
      calls.push(['graph', next.graph.maxNodes, previous.graph.maxNodes]);
    });
    live.on(['agents', 'providers'], (next) => {
      calls.push(['agents', next.graph.maxNodes, 0]);
    });
    await live.apply(config(2), ['graph']);
    await live.apply(config(3), ['agents', 'providers']);
    expect(calls).toEqual([
      ['graph', 2, 1],
      ['agents', 3, 0],
    ]);
  });

  it('runs every applier even when one fails, logs the failure and rethrows it', async () => {
    const live = createLiveConfig({ initial: config(1), logger });
    const ran: string[] = [];
    live.on(['browser'], () => {
      throw new Error('bad browser section');
    });
    live.on(['graph'], () => {
      ran.push('graph');
    });
    await expect(live.apply(config(2), ['browser', 'graph'])).rejects.toThrow('bad browser section');
    expect(ran).toEqual(['graph']);
    expect(logged).toContain('config change not applied to browser');
  });
});

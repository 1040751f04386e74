import { describe, expect, it } from 'vitest';
import { createMemorySwitch } from './memory-switch.js';
import { type MemorySection, memorySectionSchema } from './options.js';
import type { MemoryService } from './service.js';

const section = (enabled: boolean): MemorySection => memorySectionSchema.parse({ enabled });

function fakeService(log: string[]): MemoryService {
  return {
    store: {} as MemoryService['store'],
    autoRecall: {} as MemoryService['autoRecall'],
    tools: [],
    applyConfig: async (next) => {
      log.push(`apply ${next.enabled}`);
    },
    close: async () => {
      log.push('close');
    },
  };
}

describe('createMemorySwitch', () => {
  it('opens nothing while disabled, opens once when enabled, withdraws and re-applies on switches', async () => {
    const log: string[] = [];
    const service = fakeService(log);
    const memory = createMemorySwitch({
      open: async () => {
        log.push('open');
        return service;
      },
    });
    const seen: Array<MemoryService | undefined> = [];
    memory.onSwitch((current) => seen.push(current));
    await memory.apply(section(false));
    expect(memory.current).toBeUndefined();
    expect(log).toEqual([]);

    await memory.apply(section(true));
    expect(memory.current).toBe(service);
    await memory.apply(section(false));
    expect(memory.current).toBeUndefined();
    await memory.apply(section(true));
    await memory.apply(section(true));
    expect(memory.current).toBe(service);
    // Opened once; later enabled sections are applied to the open service.
    expect(log).toEqual(['open', 'apply true', 'apply true']);
    // Listeners hear the start state and each switch, not a change that keeps memory on.
    expect(seen).toEqual([undefined, service, undefined, service]);

    await memory.close();
    expect(memory.current).toBeUndefined();
    expect(log.at(-1)).toBe('close');
  });

  it('stays off and opens again next time when opening fails', async () => {
    let attempts = 0;
    const memory = createMemorySwitch({
      open: async () => {
        attempts++;
        if (attempts === 1) throw new Error('embedder unreachable');
        return fakeService([]);
      },
    });
    await expect(memory.apply(section(true))).rejects.toThrow('embedder unreachable');
    expect(memory.current).toBeUndefined();
    await memory.apply(section(true));
    expect(memory.current).toBeDefined();
    expect(attempts).toBe(2);
    await memory.close();
  });
});

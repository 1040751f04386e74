import { beforeEach, describe, expect, it } from 'vitest';
import { storeEachTest } from './internal/test-support.js';
import { createAutoRecall } from './auto-recall.js';
import { createHashingEmbedder } from './embedder.js';
import { MemoryStoreError } from './errors.js';

const memory = storeEachTest('memory-apply-');

beforeEach(async () => {
  await memory.store.storeMany(
    Array.from({ length: 12 }, (_, index) => ({ content: `note ${index} about herons and owls` })),
  );
});

describe('MemoryStore.applyConfig', () => {
  it('applies recall settings to the next search', async () => {
    expect((await memory.store.search({ query: 'herons' })).recall.exact).toBe(false);
    memory.store.applyConfig({ candidates: 3, index: { enabled: false } });
    const { recall } = await memory.store.search({ query: 'herons', limit: 1 });
    expect(recall.exact).toBe(true);
    expect(recall.ftsCandidates).toBeLessThanOrEqual(3);
    expect((await memory.store.stats()).index.kind).toBe('exact');
  });

  it('rebuilds the index for a new embedder and re-embeds entries stored with the old one', async () => {
    memory.store.applyConfig({
      embedder: createHashingEmbedder({ dimensions: 64 }),
      index: { kind: 'hnsw' },
    });
    expect(memory.store.embedder.dimensions).toBe(64);
    expect(await memory.store.backfillEmbeddings()).toBe(12);
    memory.store.applyConfig({
      embedder: createHashingEmbedder({ dimensions: 64 }),
      index: { kind: 'quantized' },
    });
    await memory.store.ready();
    expect((await memory.store.stats()).index).toMatchObject({
      kind: 'quantized',
      ready: true,
      size: 12,
      dimensions: 64,
    });
    const { results } = await memory.store.search({ query: 'note 7', lanes: ['vector'] });
    expect(results.length).toBeGreaterThan(0);
  });

  it('rejects invalid settings and keeps the ones it had', async () => {
    expect(() => memory.store.applyConfig({ candidates: 0 })).toThrow(MemoryStoreError);
    expect((await memory.store.search({ query: 'herons' })).recall.exact).toBe(false);
  });
});

describe('AutoRecall.applyConfig', () => {
  it('recalls with the new limit from the next turn on', async () => {
    const recall = createAutoRecall({ store: memory.store, limit: 5 });
    const request = { agentId: 'default', sessionKey: 's', message: 'herons owls' };
    expect((await recall.recall(request)).entries).toHaveLength(5);
    recall.applyConfig({ limit: 2 });
    expect((await recall.recall(request)).entries).toHaveLength(2);
  });
});

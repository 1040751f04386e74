import { describe, expect, it } from 'vitest';
import { MemoryStoreError } from './errors.js';
import { createLexicalReranker } from './lexical-reranker.js';
import { openTemporaryDatabase } from './internal/test-support.js';
import { createMemoryStore } from './memory-store.js';

describe('createLexicalReranker', () => {
  it('adds rare-word coverage, proximity and date match to the fused scores', async () => {
    const reranker = createLexicalReranker({ coverageWeight: 1, proximityWeight: 1, dateWeight: 1 });
    const documents = [
      '[8 May, 2023] Ana: I painted the lake at sunrise',
      '[8 May, 2023] Ana: the lake was cold',
      '[9 June, 2023] Ana: sunrise over the lake, painted in a hurry',
    ];
    const scores = await reranker.rerank('What did Ana paint at the lake in May?', documents, {
      scores: [1, 1, 1],
    });
    // The first holds both rare words side by side and the month; the second misses "painted".
    expect(scores[0]).toBeGreaterThan(scores[2]!);
    expect(scores[2]).toBeGreaterThan(scores[1]!);
    // Without prior scores it ranks by the features alone.
    const alone = await reranker.rerank('lake sunrise', documents);
    expect(alone[1]).toBeLessThan(alone[0]!);
  });

  it('keeps the fused order when no feature tells candidates apart', async () => {
    const reranker = createLexicalReranker();
    expect(await reranker.rerank('weather', ['a b c', 'd e f'], { scores: [2, 1] })).toEqual([1, 0]);
  });

  it('rejects bad options with INVALID_OPTIONS', () => {
    expect(() => createLexicalReranker({ coverageWeight: -1 })).toThrow(MemoryStoreError);
  });

  it('reorders the store results behind the reranker interface', async () => {
    const { db, remove } = await openTemporaryDatabase('memory-lexical-rerank-');
    const store = await createMemoryStore({
      database: db,
      reranker: createLexicalReranker({ dateWeight: 2 }),
    });
    try {
      await store.storeMany([
        { content: '[3 March, 2023] Jon: opened the studio, opened it at last, opened!' },
        { content: '[9 July, 2023] Jon: I opened the big new dance studio downtown with my friends' },
        // July is common, so full-text search weighs it little.
        ...['sunny', 'rainy', 'windy', 'hot', 'cold'].map((weather) => ({
          content: `[9 July, 2023] Ana: it was ${weather} in July`,
        })),
      ]);
      const fused = await store.search({ query: 'What did Jon open in July?', limit: 2, rerank: false });
      expect(fused.results[0]?.content).toContain('3 March');
      const { results, recall } = await store.search({ query: 'What did Jon open in July?', limit: 2 });
      expect(recall.reranked).toBe(true);
      expect(results[0]?.content).toContain('9 July');
    } finally {
      await store.close();
      await remove();
    }
  });
});

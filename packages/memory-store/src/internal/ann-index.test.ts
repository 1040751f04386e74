import { beforeAll, describe, expect, it } from 'vitest';
import { AnnIndex, QuantizedIndex } from './ann-index.js';
import { loadUsearch } from './usearch.js';

// A store loads usearch as it opens; these tests build indexes without a store.
beforeAll(() => loadUsearch());

function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values);
  return Float32Array.from(values, (value) => value / norm);
}

const vectors = [unit([1, 0, 0, 0]), unit([0, 1, 0, 0]), unit([0, 0, 1, 0]), unit([1, 1, 0, 0])];

describe('QuantizedIndex', () => {
  it('finds nearest entries per scope and keeps seqs right after deletes move rows', () => {
    const index = new QuantizedIndex(4);
    index.add('a', [10, 11, 12, 13], vectors);
    index.add('b', [20], [vectors[0]!]);
    expect(index.search(['a'], unit([1, 0.1, 0, 0]), 2).map((hit) => hit.seq)).toEqual([10, 13]);
    index.remove('a', [10]);
    expect(index.size()).toBe(4);
    expect(index.search(['a'], unit([0, 0, 1, 0]), 1).map((hit) => hit.seq)).toEqual([12]);
    expect(index.search(['a'], unit([1, 0.1, 0, 0]), 1).map((hit) => hit.seq)).toEqual([13]);
    expect(index.search(['a', 'b'], unit([1, 0, 0, 0]), 1).map((hit) => hit.seq)).toEqual([20]);
    index.clear('b');
    expect(index.scopes()).toEqual(['a']);
  });

  it('grows past its first allocation', () => {
    const index = new QuantizedIndex(4);
    const many = Array.from({ length: 3000 }, (_, n) => unit([1, n / 3000, 0.5, 0.25]));
    index.add(
      'a',
      many.map((_, n) => n + 1),
      many,
    );
    expect(index.size()).toBe(3000);
    expect(index.search(['a'], many[2999]!, 1)[0]?.distance).toBeLessThan(0.001);
  });
});

describe('AnnIndex', () => {
  it('adds, searches and removes by seq without duplicating an entry added twice', () => {
    const index = new AnnIndex({
      dimensions: 4,
      connectivity: 16,
      expansionAdd: 64,
      expansionSearch: 64,
      quantization: 'f32',
    });
    index.add('a', [1, 2, 3], vectors.slice(0, 3));
    index.add('a', [1], [vectors[0]!]);
    expect(index.size()).toBe(3);
    expect(index.search(['a'], unit([0, 1, 0.1, 0]), 1).map((hit) => hit.seq)).toEqual([2]);
    index.remove('a', [2]);
    expect(index.search(['a'], unit([0, 1, 0.1, 0]), 3).map((hit) => hit.seq)).not.toContain(2);
  });
});

import type { Index as UsearchIndex, ScalarKind } from 'usearch';
import { usearch } from './usearch.js';

/** One candidate of the vector lane: cosine distance, 0 for identical direction. */
export interface VectorHit {
  seq: number;
  distance: number;
}

/** What the store needs from a vector index; both kinds hold copies of libsql's vectors only. */
export interface VectorIndex {
  add(scope: string, seqs: number[], vectors: Float32Array[]): void;
  remove(scope: string, seqs: number[]): void;
  search(scopes: string[], query: Float32Array, k: number): VectorHit[];
  scopes(): string[];
  size(): number;
  clear(scope?: string): void;
}

export interface AnnSettings {
  dimensions: number;
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  quantization: 'f32' | 'f16' | 'i8';
}

/**
 * What both index kinds share: one state per scope (agent and tenant), listed,
 * counted and dropped the same way. `State` is what one scope holds.
 */
abstract class ScopedIndex<State> implements VectorIndex {
  protected readonly states = new Map<string, State>();

  abstract add(scope: string, seqs: number[], vectors: Float32Array[]): void;
  abstract remove(scope: string, seqs: number[]): void;
  abstract search(scopes: string[], query: Float32Array, k: number): VectorHit[];
  /** Entries one scope holds. */
  protected abstract countOf(state: State): number;

  /** Scope keys, for a search over every agent or tenant. */
  scopes(): string[] {
    return [...this.states.keys()];
  }

  size(): number {
    let total = 0;
    for (const state of this.states.values()) total += this.countOf(state);
    return total;
  }

  clear(scope?: string): void {
    if (scope === undefined) this.states.clear();
    else this.states.delete(scope);
  }
}

/** The `k` nearest of the hits gathered from every scope searched. */
function nearest(hits: VectorHit[], k: number): VectorHit[] {
  hits.sort((a, b) => a.distance - b.distance);
  return hits.slice(0, k);
}

/**
 * In-process HNSW graphs (usearch), one per agent and tenant so a recall never
 * walks another agent's memories. It holds only copies of vectors stored in
 * libsql and is rebuilt from there at start; keys are the entries' `seq`.
 */
export class AnnIndex extends ScopedIndex<UsearchIndex> {
  readonly #settings: AnnSettings;

  constructor(settings: AnnSettings) {
    super();
    this.#settings = settings;
  }

  static scopeKey(agentId: string, tenant: string): string {
    return `${agentId}\u0000${tenant}`;
  }

  add(scope: string, seqs: number[], vectors: Float32Array[]): void {
    if (seqs.length === 0) return;
    const index = this.#scope(scope);
    const keys: bigint[] = [];
    const rows: Float32Array[] = [];
    seqs.forEach((seq, position) => {
      const key = BigInt(seq);
      // A rebuild page can meet an entry that a live write already added.
      if (index.contains(key) === true) return;
      keys.push(key);
      rows.push(vectors[position]!);
    });
    if (keys.length === 0) return;
    const flat = new Float32Array(keys.length * this.#settings.dimensions);
    rows.forEach((vector, position) => {
      flat.set(vector, position * this.#settings.dimensions);
    });
    index.add(BigUint64Array.from(keys), flat, 0);
  }

  remove(scope: string, seqs: number[]): void {
    const index = this.states.get(scope);
    if (index === undefined || seqs.length === 0) return;
    index.remove(BigUint64Array.from(seqs, (seq) => BigInt(seq)));
  }

  /** Nearest `k` per scope, merged by distance. */
  search(scopes: string[], query: Float32Array, k: number): VectorHit[] {
    const hits: VectorHit[] = [];
    for (const scope of scopes) {
      const index = this.states.get(scope);
      if (index === undefined || index.size() === 0) continue;
      const matches = index.search(query, Math.min(k, index.size()), 0);
      for (let position = 0; position < matches.keys.length; position++) {
        const key = matches.keys[position]!;
        // usearch pads missing results with the maximum key.
        if (key === 0xffffffffffffffffn) continue;
        hits.push({ seq: Number(key), distance: matches.distances[position]! });
      }
    }
    return nearest(hits, k);
  }

  protected countOf(index: UsearchIndex): number {
    return index.size();
  }

  #scope(scope: string): UsearchIndex {
    let index = this.states.get(scope);
    if (index === undefined) {
      index = new (usearch().Index)({
        dimensions: this.#settings.dimensions,
        metric: usearch().MetricKind.Cos,
        quantization: this.#settings.quantization as ScalarKind,
        connectivity: this.#settings.connectivity,
        expansion_add: this.#settings.expansionAdd,
        expansion_search: this.#settings.expansionSearch,
        multi: false,
      });
      this.states.set(scope, index);
    }
    return index;
  }
}

interface QuantizedScope {
  codes: Int8Array;
  seqs: number[];
  slots: Map<number, number>;
}

function quantize(vector: Float32Array, into: Int8Array, offset: number): void {
  let max = 0;
  for (const value of vector) max = Math.max(max, Math.abs(value));
  // Cosine ignores length, so each vector gets its own scale and keeps all 8 bits.
  const scale = max === 0 ? 0 : 127 / max;
  for (let index = 0; index < vector.length; index++)
    into[offset + index] = Math.round(vector[index]! * scale);
}

/**
 * Exact search over int8-quantized copies of the vectors with usearch's SIMD
 * kernels: approximate only through quantization, nothing to build, so an
 * insert is a copy and a start-up rebuild is a read of libsql. One packed
 * array per agent and tenant; deletes move the last row into the hole.
 */
export class QuantizedIndex extends ScopedIndex<QuantizedScope> {
  readonly #dimensions: number;

  constructor(dimensions: number) {
    super();
    this.#dimensions = dimensions;
  }

  add(scope: string, seqs: number[], vectors: Float32Array[]): void {
    let state = this.states.get(scope);
    if (state === undefined) {
      state = { codes: new Int8Array(1024 * this.#dimensions), seqs: [], slots: new Map() };
      this.states.set(scope, state);
    }
    const d = this.#dimensions;
    seqs.forEach((seq, position) => {
      const existing = state.slots.get(seq);
      const slot = existing ?? state.seqs.length;
      if (existing === undefined) {
        if ((slot + 1) * d > state.codes.length) {
          const grown = new Int8Array(state.codes.length * 2);
          grown.set(state.codes);
          state.codes = grown;
        }
        state.seqs.push(seq);
        state.slots.set(seq, slot);
      }
      quantize(vectors[position]!, state.codes, slot * d);
    });
  }

  remove(scope: string, seqs: number[]): void {
    const state = this.states.get(scope);
    if (state === undefined) return;
    const d = this.#dimensions;
    for (const seq of seqs) {
      const slot = state.slots.get(seq);
      if (slot === undefined) continue;
      const last = state.seqs.length - 1;
      if (slot !== last) {
        state.codes.copyWithin(slot * d, last * d, (last + 1) * d);
        const moved = state.seqs[last]!;
        state.seqs[slot] = moved;
        state.slots.set(moved, slot);
      }
      state.seqs.pop();
      state.slots.delete(seq);
    }
  }

  search(scopes: string[], query: Float32Array, k: number): VectorHit[] {
    const probe = new Int8Array(this.#dimensions);
    quantize(query, probe, 0);
    const hits: VectorHit[] = [];
    for (const scope of scopes) {
      const state = this.states.get(scope);
      const count = state?.seqs.length ?? 0;
      if (state === undefined || count === 0) continue;
      const dataset = state.codes.subarray(0, count * this.#dimensions);
      const matches = usearch().exactSearch(
        dataset,
        probe,
        this.#dimensions,
        Math.min(k, count),
        usearch().MetricKind.Cos,
        0,
      ) as { keys: BigUint64Array; distances: Float32Array };
      for (let position = 0; position < matches.keys.length; position++) {
        const row = Number(matches.keys[position]!);
        const seq = state.seqs[row];
        if (seq !== undefined) hits.push({ seq, distance: matches.distances[position]! });
      }
    }
    return nearest(hits, k);
  }

  protected countOf(state: QuantizedScope): number {
    return state.seqs.length;
  }
}

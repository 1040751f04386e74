import usearch, { type Index as UsearchIndex, type ScalarKind } from 'usearch';

/** One candidate of the vector lane: cosine distance, 0 for identical direction. */
export interface VectorHit {
  seq: number;
  distance: number;
}

export interface AnnSettings {
  dimensions: number;
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
  quantization: 'f32' | 'f16' | 'i8';
}

/**
 * In-process HNSW graphs (usearch), one per agent and tenant so a recall never
 * walks another agent's memories. It holds only copies of vectors stored in
 * libsql and is rebuilt from there at start; keys are the entries' `seq`.
 */
export class AnnIndex {
  readonly #scopes = new Map<string, UsearchIndex>();
  readonly #settings: AnnSettings;

  constructor(settings: AnnSettings) {
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
    const index = this.#scopes.get(scope);
    if (index === undefined || seqs.length === 0) return;
    index.remove(BigUint64Array.from(seqs, (seq) => BigInt(seq)));
  }

  /** Nearest `k` per scope, merged by distance. */
  search(scopes: string[], query: Float32Array, k: number): VectorHit[] {
    const hits: VectorHit[] = [];
    for (const scope of scopes) {
      const index = this.#scopes.get(scope);
      if (index === undefined || index.size() === 0) continue;
      const matches = index.search(query, Math.min(k, index.size()), 0);
      for (let position = 0; position < matches.keys.length; position++) {
        const key = matches.keys[position]!;
        // usearch pads missing results with the maximum key.
        if (key === 0xffffffffffffffffn) continue;
        hits.push({ seq: Number(key), distance: matches.distances[position]! });
      }
    }
    hits.sort((a, b) => a.distance - b.distance);
    return hits.slice(0, k);
  }

  /** Scope keys, for a search over every agent or tenant. */
  scopes(): string[] {
    return [...this.#scopes.keys()];
  }

  size(): number {
    let total = 0;
    for (const index of this.#scopes.values()) total += index.size();
    return total;
  }

  clear(scope?: string): void {
    if (scope === undefined) this.#scopes.clear();
    else this.#scopes.delete(scope);
  }

  #scope(scope: string): UsearchIndex {
    let index = this.#scopes.get(scope);
    if (index === undefined) {
      index = new usearch.Index({
        dimensions: this.#settings.dimensions,
        metric: usearch.MetricKind.Cos,
        quantization: this.#settings.quantization as ScalarKind,
        connectivity: this.#settings.connectivity,
        expansion_add: this.#settings.expansionAdd,
        expansion_search: this.#settings.expansionSearch,
        multi: false,
      });
      this.#scopes.set(scope, index);
    }
    return index;
  }
}

/**
 * The ANN choice, measured: libsql's native vector index (defaults, float8
 * neighbours with 64 and with 20 neighbours), usearch's in-process HNSW
 * (f32 defaults, i8 with a wider search beam), exact search over int8-quantized
 * vectors and over float32 (plain JS loops and usearch's SIMD exact search),
 * all on the same clustered 384-d vectors and the same queries. Figures:
 * inserts per second, bytes per entry (disk for libsql, the saved index for
 * usearch, the array for exact search), recall@10 against exact float search,
 * and query latency p50/p95.
 *
 * The libsql native index inserts about a hundred rows per second on two
 * cores, so by default it is measured on `--ann-libsql` entries (2,000) and the
 * rest on `--ann-size` (20,000); pass `--ann-libsql=20000` for the full figure
 * (about five minutes).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import usearch, { type ScalarKind } from 'usearch';
import { clusteredVectors, exactTopK, percentile, recallAt } from './data.js';

const DIMENSIONS = 384;
const K = 10;

export interface AnnRow {
  name: string;
  entries: number;
  insertsPerSec: number;
  bytesPerEntry: number;
  recall: number;
  p50Ms: number;
  p95Ms: number;
}

interface Subject {
  name: string;
  /** Inserts every vector; returns bytes per entry. */
  build(vectors: Float32Array[]): Promise<number>;
  query(query: Float32Array): Promise<number[]> | number[];
  close(): Promise<void> | void;
}

function blobOf(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

function fileBytes(path: string): number {
  let total = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      total += statSync(path + suffix).size;
    } catch {
      // The WAL and shared-memory files exist only while the database is open.
    }
  }
  return total;
}

async function libsqlSubject(name: string, indexOptions: string[] | null, dir: string): Promise<Subject> {
  const path = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.db`);
  const db = await openDatabase({ url: `file:${path}` });
  await db.execute(`CREATE TABLE v (id INTEGER PRIMARY KEY, e F32_BLOB(${DIMENSIONS}))`);
  if (indexOptions !== null) {
    const extra = indexOptions.map((option) => `, '${option}'`).join('');
    await db.execute(`CREATE INDEX v_idx ON v (libsql_vector_idx(e${extra}))`);
  }
  return {
    name,
    async build(vectors) {
      for (let start = 0; start < vectors.length; start += 200) {
        const slice = vectors.slice(start, start + 200);
        await db.transaction(async (tx) => {
          for (let offset = 0; offset < slice.length; offset++) {
            await tx.execute('INSERT INTO v (id, e) VALUES (?, ?)', [start + offset, blobOf(slice[offset]!)]);
          }
        });
      }
      await db.execute('PRAGMA wal_checkpoint(TRUNCATE)');
      return fileBytes(path) / vectors.length;
    },
    async query(query) {
      if (indexOptions === null) {
        const rows = await db.query<{ id: number }>(
          'SELECT id FROM v ORDER BY vector_distance_cos(e, ?) LIMIT ?',
          [blobOf(query), K],
        );
        return rows.map((row) => Number(row.id));
      }
      const rows = await db.query<{ id: number }>("SELECT id FROM vector_top_k('v_idx', ?, ?)", [
        blobOf(query),
        K,
      ]);
      return rows.map((row) => Number(row.id));
    },
    close: () => db.close(),
  };
}

function usearchSubject(
  name: string,
  config: { quantization: 'f32' | 'f16' | 'i8'; expansionSearch: number },
  dir: string,
): Subject {
  const index = new usearch.Index({
    dimensions: DIMENSIONS,
    metric: usearch.MetricKind.Cos,
    quantization: config.quantization as ScalarKind,
    connectivity: 0,
    expansion_add: 0,
    expansion_search: config.expansionSearch,
    multi: false,
  });
  return {
    name,
    async build(vectors) {
      // Batches of 100 mirror how the store commits: one transaction, then one index add.
      for (let start = 0; start < vectors.length; start += 100) {
        const slice = vectors.slice(start, start + 100);
        const flat = new Float32Array(slice.length * DIMENSIONS);
        slice.forEach((vector, offset) => {
          flat.set(vector, offset * DIMENSIONS);
        });
        const keys = BigUint64Array.from(slice, (_, offset) => BigInt(start + offset));
        index.add(keys, flat, 0);
      }
      const path = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.usearch`);
      index.save(path);
      return statSync(path).size / vectors.length;
    },
    query(query) {
      const matches = index.search(query, K, 0);
      return Array.from(matches.keys, (key) => Number(key));
    },
    close() {},
  };
}

function quantize(vector: Float32Array): { codes: Int8Array; scale: number } {
  let max = 0;
  for (const value of vector) max = Math.max(max, Math.abs(value));
  const scale = max === 0 ? 1 : 127 / max;
  return { codes: Int8Array.from(vector, (value) => Math.round(value * scale)), scale };
}

function topK(scores: Float32Array, k: number): number[] {
  // One pass with a small sorted buffer: cheaper than sorting every score.
  const best: number[] = [];
  for (let index = 0; index < scores.length; index++) {
    const score = scores[index]!;
    if (best.length < k || score > scores[best[best.length - 1]!]!) {
      let position = best.length;
      while (position > 0 && scores[best[position - 1]!]! < score) position--;
      best.splice(position, 0, index);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

function jsExactSubject(name: string, quantized: boolean): Subject {
  let floats = new Float32Array(0);
  let codes = new Int8Array(0);
  let scales = new Float32Array(0);
  let count = 0;
  return {
    name,
    async build(vectors) {
      count = vectors.length;
      if (quantized) {
        codes = new Int8Array(count * DIMENSIONS);
        scales = new Float32Array(count);
        vectors.forEach((vector, index) => {
          const q = quantize(vector);
          codes.set(q.codes, index * DIMENSIONS);
          scales[index] = 1 / q.scale;
        });
        return (codes.byteLength + scales.byteLength) / count;
      }
      floats = new Float32Array(count * DIMENSIONS);
      vectors.forEach((vector, index) => {
        floats.set(vector, index * DIMENSIONS);
      });
      return floats.byteLength / count;
    },
    query(query) {
      const scores = new Float32Array(count);
      if (quantized) {
        const q = quantize(query);
        for (let index = 0; index < count; index++) {
          const base = index * DIMENSIONS;
          let dot = 0;
          for (let d = 0; d < DIMENSIONS; d++) dot += codes[base + d]! * q.codes[d]!;
          scores[index] = dot * scales[index]!;
        }
      } else {
        for (let index = 0; index < count; index++) {
          const base = index * DIMENSIONS;
          let dot = 0;
          for (let d = 0; d < DIMENSIONS; d++) dot += floats[base + d]! * query[d]!;
          scores[index] = dot;
        }
      }
      return topK(scores, K);
    },
    close() {},
  };
}

function usearchExactSubject(name: string, quantized: boolean): Subject {
  let dataset: Float32Array | Int8Array = new Float32Array(0);
  return {
    name,
    async build(vectors) {
      if (quantized) {
        // usearch's cosine on i8 normalises each vector, so a shared scale keeps ranks intact.
        const codes = new Int8Array(vectors.length * DIMENSIONS);
        vectors.forEach((vector, index) => {
          codes.set(quantize(vector).codes, index * DIMENSIONS);
        });
        dataset = codes;
      } else {
        const floats = new Float32Array(vectors.length * DIMENSIONS);
        vectors.forEach((vector, index) => {
          floats.set(vector, index * DIMENSIONS);
        });
        dataset = floats;
      }
      return dataset.byteLength / vectors.length;
    },
    query(query) {
      const probe = quantized ? quantize(query).codes : query;
      const matches = usearch.exactSearch(dataset, probe, DIMENSIONS, K, usearch.MetricKind.Cos, 0);
      return Array.from(matches.keys, (key) => Number(key));
    },
    close() {},
  };
}

async function measure(
  subject: Subject,
  vectors: Float32Array[],
  queries: Float32Array[],
  truth: number[][],
): Promise<AnnRow> {
  const started = performance.now();
  const bytesPerEntry = await subject.build(vectors);
  const insertMs = performance.now() - started;
  const latencies: number[] = [];
  let recall = 0;
  for (let index = 0; index < queries.length; index++) {
    const begin = performance.now();
    const found = await subject.query(queries[index]!);
    latencies.push(performance.now() - begin);
    recall += recallAt(found, truth[index]!);
  }
  await subject.close();
  return {
    name: subject.name,
    entries: vectors.length,
    insertsPerSec: (vectors.length * 1000) / insertMs,
    bytesPerEntry,
    recall: recall / queries.length,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
  };
}

/** Runs the ANN comparison and returns one row per subject. */
export async function runAnnComparison(options: {
  size: number;
  libsqlSize: number;
  queries: number;
}): Promise<AnnRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-ann-'));
  const rows: AnnRow[] = [];
  try {
    const all = clusteredVectors(options.size + options.queries, DIMENSIONS, { seed: 7 });
    const vectors = all.slice(0, options.size);
    const queries = all.slice(options.size);
    const small = vectors.slice(0, options.libsqlSize);
    const truthFull = queries.map((query) => exactTopK(vectors, query, K));
    const truthSmall =
      options.libsqlSize === options.size ? truthFull : queries.map((query) => exactTopK(small, query, K));

    const libsqlSubjects: Array<[string, string[] | null]> = [
      ['libsql table, no index (exact SQL scan)', null],
      ['libsql_vector_idx defaults', []],
      ['libsql_vector_idx float8, 64 neighbours', ['compress_neighbors=float8', 'max_neighbors=64']],
      ['libsql_vector_idx float8, 20 neighbours', ['compress_neighbors=float8', 'max_neighbors=20']],
    ];
    for (const [name, indexOptions] of libsqlSubjects) {
      const entries = indexOptions === null ? vectors : small;
      const truth = indexOptions === null ? truthFull : truthSmall;
      rows.push(await measure(await libsqlSubject(name, indexOptions, dir), entries, queries, truth));
      report(rows[rows.length - 1]!);
    }
    const inProcess: Subject[] = [
      usearchSubject('usearch HNSW f32, defaults', { quantization: 'f32', expansionSearch: 0 }, dir),
      usearchSubject(
        'usearch HNSW i8, expansion_search 128',
        { quantization: 'i8', expansionSearch: 128 },
        dir,
      ),
      usearchSubject(
        'usearch HNSW f16, expansion_search 128',
        { quantization: 'f16', expansionSearch: 128 },
        dir,
      ),
      jsExactSubject('exact, float32, JS loop', false),
      jsExactSubject('exact, int8-quantized, JS loop', true),
      usearchExactSubject('exact, float32, usearch SIMD', false),
      usearchExactSubject('exact, int8-quantized, usearch SIMD', true),
    ];
    for (const subject of inProcess) {
      rows.push(await measure(subject, vectors, queries, truthFull));
      report(rows[rows.length - 1]!);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

function report(row: AnnRow): void {
  console.log(
    `  ${row.name.padEnd(44)} n=${String(row.entries).padStart(6)}  ` +
      `${row.insertsPerSec.toFixed(0).padStart(8)} ins/s  ${row.bytesPerEntry.toFixed(0).padStart(7)} B/entry  ` +
      `recall@10 ${row.recall.toFixed(3)}  p50 ${row.p50Ms.toFixed(2)} ms  p95 ${row.p95Ms.toFixed(2)} ms`,
  );
}
